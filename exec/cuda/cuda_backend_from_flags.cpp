// The CUDA backend built from its flags: the flags checked first, before any GPU is touched.
#include "exec/cuda/cuda_backend_from_flags.h"

#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "exec/cuda/detail/cuda_backend.h"
#include "exec/cuda/detail/local_gpu.h"
#include "exec/multiprocess/process_group.h"
#include "sim/support/error.h"

namespace zb::exec::cuda {

std::unique_ptr<Backend> make_cuda_backend(const CudaFlags& flags, int devices, ProcessGroup* group) {
  // The flags first: bad input is refused before any GPU is touched.
  std::optional<DeviceSet> set;
  std::optional<int> process_gpu;
  if (group == nullptr) {
    set = parse_device_set(flags.devices, devices);
  } else {
    if (group->world() != devices) {
      throw InputError(fmt::format("--p {} but the run has {} processes (one pipeline device each)",
                                   devices, group->world()));
    }
    process_gpu = parse_process_gpu(flags.devices);
  }
  CudaOptions options;
  options.precision = parse_precision(flags.precision);
  options.sm_partition = parse_sm_partition(flags.sm_partition);
  options.on_warning = [](const std::string& warning) {
    fmt::print(stderr, "zbexec: warning: {}\n", warning);
  };
  std::unique_ptr<CudaBackend> backend;
  if (set) {
    backend = std::make_unique<CudaBackend>(*set, options);
  } else {
    const int gpu = process_gpu ? *process_gpu : local_gpu(group->rank(), usable_gpu_count());
    backend = std::make_unique<CudaBackend>(*group, gpu, options);
  }
  fmt::print("cuda backend: {}\n", backend->summary());
  std::fflush(stdout);
  return backend;
}

void label_actions(Backend& backend, const zb::Schedule& schedule) {
  if (auto* cuda = dynamic_cast<CudaBackend*>(&backend)) cuda->label_actions(schedule);
}

}  // namespace zb::exec::cuda
