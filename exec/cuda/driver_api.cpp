// The CUDA driver API entry points the backend uses, resolved at run time through the runtime
// (cudaGetDriverEntryPointByVersion), so zbexec never links libcuda and starts without a driver.
#include "exec/cuda/detail/driver_api.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <mutex>
#include <string>

#include "exec/cuda/detail/cuda_check.h"

namespace zb::exec::cuda {

namespace {

constexpr unsigned int kApiVersion = 12040;  // green contexts arrived in 12.4

template <typename Fn>
void resolve(const char* symbol, Fn& out, std::string& missing) {
  void* pointer = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t error = cudaGetDriverEntryPointByVersion(symbol, &pointer, kApiVersion,
                                                             cudaEnableDefault, &status);
  if (error != cudaSuccess || status != cudaDriverEntryPointSuccess || pointer == nullptr) {
    if (missing.empty()) {
      missing = fmt::format("{} ({}, query status {})", symbol, cudaGetErrorString(error),
                            static_cast<int>(status));
    }
    return;
  }
  out = reinterpret_cast<Fn>(pointer);
}

}  // namespace

const DriverApi& driver_api() {
  static DriverApi api;
  static std::string missing;
  static std::once_flag once;
  std::call_once(once, [] {
    resolve("cuGetErrorName", api.get_error_name, missing);
    resolve("cuGetErrorString", api.get_error_string, missing);
    resolve("cuCtxGetCurrent", api.ctx_get_current, missing);
    resolve("cuCtxSetCurrent", api.ctx_set_current, missing);
    resolve("cuDeviceGet", api.device_get, missing);
    resolve("cuDeviceGetDevResource", api.device_get_dev_resource, missing);
    resolve("cuDevSmResourceSplitByCount", api.dev_sm_resource_split_by_count, missing);
    resolve("cuDevResourceGenerateDesc", api.dev_resource_generate_desc, missing);
    resolve("cuGreenCtxCreate", api.green_ctx_create, missing);
    resolve("cuGreenCtxDestroy", api.green_ctx_destroy, missing);
    resolve("cuCtxFromGreenCtx", api.ctx_from_green_ctx, missing);
    resolve("cuGreenCtxStreamCreate", api.green_ctx_stream_create, missing);
  });
  if (!missing.empty()) {
    throw CudaError(fmt::format("the CUDA driver lacks the entry point {}", missing));
  }
  return api;
}

}  // namespace zb::exec::cuda
