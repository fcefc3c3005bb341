// Turns CUDA runtime, driver, cuBLAS and NCCL status codes into exceptions that name the call.
#include "exec/cuda/detail/cuda_check.h"

#include <fmt/format.h>

#include "exec/cuda/detail/driver_api.h"

namespace zb::exec::cuda {

void check(cudaError_t status, std::string_view what) {
  if (status == cudaSuccess) return;
  throw CudaError(fmt::format("{}: {} ({}, {})", what, cudaGetErrorString(status),
                              cudaGetErrorName(status), static_cast<int>(status)));
}

void check(CUresult status, std::string_view what) {
  if (status == CUDA_SUCCESS) return;
  const char* name = nullptr;
  const char* text = nullptr;
  try {
    driver_api().get_error_name(status, &name);
    driver_api().get_error_string(status, &text);
  } catch (const CudaError&) {
    // no driver names: the number alone
  }
  throw CudaError(fmt::format("{}: {} ({}, {})", what, text ? text : "unknown driver error",
                              name ? name : "?", static_cast<int>(status)));
}

void check(cublasStatus_t status, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw CudaError(fmt::format("{}: {} ({})", what, cublasGetStatusString(status),
                              static_cast<int>(status)));
}

void check(ncclResult_t status, std::string_view what) {
  if (status == ncclSuccess) return;
  throw CudaError(fmt::format("{}: {} (NCCL {}; set NCCL_DEBUG=WARN for details)", what,
                              ncclGetErrorString(status), static_cast<int>(status)));
}

bool cuda_available(std::string* why) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    if (why) *why = fmt::format("cudaGetDeviceCount: {} ({})", cudaGetErrorString(status), static_cast<int>(status));
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return false;
  }
  if (count == 0) {
    if (why) *why = "cudaGetDeviceCount: no CUDA device";
    return false;
  }
  return true;
}

}  // namespace zb::exec::cuda
