// The CUDA driver API entry points the backend uses, resolved at run time through the runtime
// (cudaGetDriverEntryPointByVersion), so zbexec never links libcuda and starts without a driver.
#pragma once

#include <cuda.h>

namespace zb::exec::cuda {

struct DriverApi {
  decltype(&::cuGetErrorName) get_error_name = nullptr;
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuCtxGetCurrent) ctx_get_current = nullptr;
  decltype(&::cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetDevResource) device_get_dev_resource = nullptr;
  decltype(&::cuDevSmResourceSplitByCount) dev_sm_resource_split_by_count = nullptr;
  decltype(&::cuDevResourceGenerateDesc) dev_resource_generate_desc = nullptr;
  decltype(&::cuGreenCtxCreate) green_ctx_create = nullptr;
  decltype(&::cuGreenCtxDestroy) green_ctx_destroy = nullptr;
  decltype(&::cuCtxFromGreenCtx) ctx_from_green_ctx = nullptr;
  decltype(&::cuGreenCtxStreamCreate) green_ctx_stream_create = nullptr;
};

// Resolved once (the CUDA runtime initialises the driver). Throws CudaError naming the first
// entry point the installed driver lacks (green contexts need a CUDA 12.4+ driver).
const DriverApi& driver_api();

}  // namespace zb::exec::cuda
