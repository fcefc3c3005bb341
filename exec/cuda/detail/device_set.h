// The --devices flag of the CUDA backend: real GPUs (cuda:0,1,2,3) or N stages on one GPU (virtual:N).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace zb::exec::cuda {

struct DeviceSet {
  enum class Kind { gpus, virtual_gpu };
  Kind kind = Kind::gpus;
  // gpus: the GPU ordinal of every pipeline device; virtual_gpu: the one GPU they share.
  std::vector<int> ordinals;
  int count = 0;  // pipeline devices

  std::string describe() const;  // "cuda:0,1" or "virtual:4 on cuda:0"
};

// Parses "cuda:0,1,2,3", "virtual:N" or "virtual:N@G" (G: the GPU, default 0). An empty text
// means cuda:0..p-1. Throws InputError naming --devices when the text is malformed, lists a GPU
// twice, or its device count differs from `devices` (the --p of the run).
DeviceSet parse_device_set(std::string_view text, int devices);

}  // namespace zb::exec::cuda
