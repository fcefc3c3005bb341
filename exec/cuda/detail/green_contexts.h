// Equal SM partitions of one GPU as CUDA green contexts (driver API), for virtual devices.
#pragma once

#include <cuda.h>

#include <string>
#include <vector>

namespace zb::exec::cuda {

struct GreenPartition {
  CUgreenCtx green = nullptr;
  CUcontext context = nullptr;  // cuCtxFromGreenCtx(green)
  int sm_count = 0;
};

// Splits GPU `ordinal` into `count` green contexts with the same number of SMs each (the largest
// share the GPU's partition granularity allows; leftover SMs stay unused so every virtual device
// is equally fast). Throws CudaError saying why when the driver or GPU cannot do it.
std::vector<GreenPartition> create_green_partitions(int ordinal, int count);
void destroy_green_partitions(std::vector<GreenPartition>& partitions);

// The GPU's SM count (cudaDevAttrMultiProcessorCount).
int sm_count_of(int ordinal);

}  // namespace zb::exec::cuda
