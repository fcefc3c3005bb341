// Which GPU a process of a multi-process run uses (one GPU per process): --devices or the launcher.
#include "exec/cuda/detail/local_gpu.h"

#include <fmt/format.h>

#include <charconv>
#include <string>

#include "sim/support/error.h"

namespace zb::exec::cuda {

namespace {

std::optional<int> parse_index(std::string_view text) {
  int value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 0) return std::nullopt;
  return value;
}

}  // namespace

std::optional<int> parse_process_gpu(std::string_view devices) {
  if (devices.empty()) return std::nullopt;
  if (devices.substr(0, 8) == "virtual:") {
    throw InputError(fmt::format("--devices '{}': virtual devices share one process; a "
                                 "multi-process run has one GPU per process (give cuda:G, or "
                                 "leave --devices out for the local rank's GPU)", devices));
  }
  if (devices.substr(0, 5) == "cuda:") {
    const std::string_view rest = devices.substr(5);
    if (rest.find(',') != std::string_view::npos) {
      throw InputError(fmt::format("--devices '{}': a multi-process run has one GPU per process "
                                   "(give this process's cuda:G, or leave --devices out for the "
                                   "local rank's GPU)", devices));
    }
    if (auto gpu = parse_index(rest)) return gpu;
  }
  throw InputError(fmt::format("--devices '{}': expected cuda:G (this process's GPU) in a "
                               "multi-process run, or nothing (the local rank's GPU)", devices));
}

int local_gpu(int rank, int gpu_count, const EnvLookup& env) {
  if (gpu_count < 1) throw InputError("--backend cuda: this node has no GPU");
  const auto local = first_env_index({"SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK", "LOCAL_RANK"}, env);
  if (!local) return rank % gpu_count;
  // One visible GPU: the launcher bound it to this process (--gpus-per-task, CUDA_VISIBLE_DEVICES).
  if (gpu_count == 1) return 0;
  if (local->value >= gpu_count) {
    throw InputError(fmt::format("rank {}: local rank {} ({}) but this node has {} GPUs (run at "
                                 "most one process per GPU, or give --devices cuda:G)",
                                 rank, local->value, local->name, gpu_count));
  }
  return local->value;
}

}  // namespace zb::exec::cuda
