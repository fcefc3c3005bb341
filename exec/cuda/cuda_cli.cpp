// zbexec's CUDA flags (--devices, --precision, --sm-partition) and building the backend from them.
#include "exec/cuda/cuda_cli.h"

#include <fmt/format.h>

#include <cstdio>
#include <optional>

#include "exec/cuda/cuda_backend.h"
#include "exec/cuda/local_gpu.h"
#include "exec/process_group.h"
#include "sim/schedule/error.h"

namespace po = boost::program_options;

namespace zb::exec::cuda {

void add_cuda_options(po::options_description& options, CudaFlags& flags) {
  options.add_options()
      ("devices", po::value(&flags.devices), "with --backend cuda: cuda:0,1,2,3 (one GPU per pipeline device, NCCL between them) or virtual:N[@GPU] (N devices on one GPU); default cuda:0..p-1. One process per device: cuda:G, default the local rank's GPU")
      ("precision", po::value(&flags.precision)->default_value("fp32"), "with --backend cuda: GEMM precision fp32 | bf16 (bf16 operands, fp32 accumulation)")
      ("sm-partition", po::value(&flags.sm_partition)->default_value("green"), "with --devices virtual:N: green (green contexts, equal SM shares) | streams (all SMs shared)");
}

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
