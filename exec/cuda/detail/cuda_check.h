// Turns CUDA runtime, driver, cuBLAS and NCCL status codes into exceptions that name the call.
#pragma once

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>
#include <string_view>

#include "exec/runtime/exec_error.h"

namespace zb::exec::cuda {

// A failed CUDA, cuBLAS or NCCL call; the message names the call, the device and the status.
class CudaError : public ExecError {
 public:
  using ExecError::ExecError;
};

// `what` names the call and its context, e.g. "cuda:1: cudaMallocAsync(4096 bytes)".
void check(cudaError_t status, std::string_view what);
void check(CUresult status, std::string_view what);
void check(cublasStatus_t status, std::string_view what);
void check(ncclResult_t status, std::string_view what);

// True when at least one CUDA device is usable (cudaGetDeviceCount succeeds with a count > 0);
// `why` receives the reason otherwise (e.g. "cudaGetDeviceCount: insufficient driver (35)").
bool cuda_available(std::string* why = nullptr);

}  // namespace zb::exec::cuda
