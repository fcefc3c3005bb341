// Equal SM partitions of one GPU as CUDA green contexts (driver API), for virtual devices.
#include "exec/cuda/detail/green_contexts.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include "exec/cuda/detail/cuda_check.h"
#include "exec/cuda/detail/driver_api.h"

namespace zb::exec::cuda {

int sm_count_of(int ordinal) {
  int count = 0;
  check(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, ordinal),
        fmt::format("cuda:{}: cudaDeviceGetAttribute(SM count)", ordinal));
  return count;
}

std::vector<GreenPartition> create_green_partitions(int ordinal, int count) {
  const std::string where = fmt::format("cuda:{}: green contexts for {} virtual devices", ordinal, count);
  // The primary context first: green contexts retain it, and creating it once up front avoids
  // initialising and tearing it down repeatedly.
  check(cudaSetDevice(ordinal), where + ": cudaSetDevice");
  check(cudaFree(nullptr), where + ": initialising the primary context");
  const DriverApi& api = driver_api();
  CUdevice device = 0;
  check(api.device_get(&device, ordinal), where + ": cuDeviceGet");
  CUdevResource all{};
  check(api.device_get_dev_resource(device, &all, CU_DEV_RESOURCE_TYPE_SM), where + ": cuDeviceGetDevResource");
  const unsigned int total = all.sm.smCount;
  const unsigned int granule = all.sm.smCoscheduledAlignment > 0 ? all.sm.smCoscheduledAlignment : 1;
  const unsigned int share = total / static_cast<unsigned int>(count) / granule * granule;
  if (share < all.sm.minSmPartitionSize || share == 0) {
    throw CudaError(fmt::format("{}: {} SMs cannot be split into {} equal partitions of at least "
                                "{} SMs (granularity {})", where, total, count,
                                all.sm.minSmPartitionSize, granule));
  }
  std::vector<CUdevResource> groups(static_cast<std::size_t>(count));
  unsigned int made = static_cast<unsigned int>(count);
  CUdevResource remaining{};
  check(api.dev_sm_resource_split_by_count(groups.data(), &made, &all, &remaining, 0, share),
        where + fmt::format(": cuDevSmResourceSplitByCount({} x {} SMs)", count, share));
  if (made < static_cast<unsigned int>(count)) {
    throw CudaError(fmt::format("{}: the driver made only {} partitions of {} SMs", where, made, share));
  }
  std::vector<GreenPartition> partitions;
  try {
    for (int i = 0; i < count; ++i) {
      CUdevResourceDesc desc = nullptr;
      check(api.dev_resource_generate_desc(&desc, &groups[static_cast<std::size_t>(i)], 1),
            where + ": cuDevResourceGenerateDesc");
      GreenPartition partition;
      check(api.green_ctx_create(&partition.green, desc, device, CU_GREEN_CTX_DEFAULT_STREAM),
            where + ": cuGreenCtxCreate");
      partitions.push_back(partition);
      check(api.ctx_from_green_ctx(&partitions.back().context, partition.green), where + ": cuCtxFromGreenCtx");
      partitions.back().sm_count = static_cast<int>(groups[static_cast<std::size_t>(i)].sm.smCount);
    }
  } catch (...) {
    destroy_green_partitions(partitions);
    throw;
  }
  // Leave the primary context current on this thread, as the runtime API expects.
  check(cudaSetDevice(ordinal), where + ": cudaSetDevice");
  return partitions;
}

void destroy_green_partitions(std::vector<GreenPartition>& partitions) {
  for (auto& partition : partitions) {
    if (partition.green != nullptr) driver_api().green_ctx_destroy(partition.green);
  }
  partitions.clear();
}

}  // namespace zb::exec::cuda
