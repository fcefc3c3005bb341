// The backends zbexec can run on (cpu; cuda when built with it), their flags, and making one.
#include "exec/cli/backends.h"

#include <fmt/format.h>

#include <tuple>

#include "exec/cpu/cpu_backend.h"
#include "exec/multiprocess/process_group.h"
#include "sim/support/error.h"
#ifdef ZB_HAVE_CUDA
#include "exec/cuda/cuda_backend_from_flags.h"
#endif

namespace zb::exec {

namespace po = boost::program_options;

void add_backend_options(po::options_description& options, BackendFlags& flags) {
#ifdef ZB_HAVE_CUDA
  options.add_options()
      ("devices", po::value(&flags.devices), "with --backend cuda: cuda:0,1,2,3 (one GPU per pipeline device, NCCL between them) or virtual:N[@GPU] (N devices on one GPU); default cuda:0..p-1. One process per device: cuda:G, default the local rank's GPU")
      ("precision", po::value(&flags.precision)->default_value("fp32"), "with --backend cuda: GEMM precision fp32 | bf16 (bf16 operands, fp32 accumulation)")
      ("sm-partition", po::value(&flags.sm_partition)->default_value("green"), "with --devices virtual:N: green (green contexts, equal SM shares) | streams (all SMs shared)");
#else
  (void)options;
  (void)flags;
#endif
}

std::unique_ptr<Backend> make_backend(std::string_view name, int devices, const BackendFlags& flags,
                                      ProcessGroup* group) {
  if (name == "cpu") {
    // A CUDA flag on a CPU run is a mistake (a forgotten --backend cuda), not something to ignore.
    const BackendFlags defaults;
    for (const auto& [flag, given, fallback] : {std::tuple{"--devices", flags.devices, defaults.devices},
                                                std::tuple{"--precision", flags.precision, defaults.precision},
                                                std::tuple{"--sm-partition", flags.sm_partition, defaults.sm_partition}}) {
      if (given != fallback) {
        throw InputError(fmt::format("{} '{}': only with --backend cuda (this run is --backend cpu)", flag, given));
      }
    }
    if (group != nullptr) {
      if (group->world() != devices) {
        throw InputError(fmt::format("--p {} but the run has {} processes (one pipeline device each)",
                                     devices, group->world()));
      }
      return std::make_unique<CpuBackend>(*group);
    }
    return std::make_unique<CpuBackend>(devices);
  }
  if (name == "cuda") {
#ifdef ZB_HAVE_CUDA
    return cuda::make_cuda_backend(flags, devices, group);
#else
    throw InputError("--backend cuda: this build has no CUDA backend (configure with nvcc and "
                     "ZB_WITH_CUDA=ON)");
#endif
  }
  (void)flags;
  throw InputError(fmt::format("--backend '{}': unknown backend (known: cpu, cuda)", name));
}

void label_actions(Backend& backend, const zb::Schedule& schedule) {
#ifdef ZB_HAVE_CUDA
  cuda::label_actions(backend, schedule);
#else
  (void)backend;
  (void)schedule;
#endif
}

}  // namespace zb::exec
