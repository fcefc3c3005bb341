// Which GPU a process of a multi-process run uses (one GPU per process): --devices or the launcher.
#pragma once

#include <optional>
#include <string_view>

#include "exec/multiprocess/launcher_env.h"

namespace zb::exec::cuda {

// --devices of a multi-process run: empty (nullopt: the GPU of the local rank, see local_gpu) or
// cuda:G (exactly one GPU). Throws InputError naming --devices for anything else: virtual:N (its
// devices share one process), a list of GPUs, a malformed text.
std::optional<int> parse_process_gpu(std::string_view devices);

// The GPU of this process when --devices names none: its rank on this node as the launcher says
// (SLURM_LOCALID, OMPI_COMM_WORLD_LOCAL_RANK or LOCAL_RANK, the first that is set), else
// rank % gpu_count. A process that sees one GPU only (the launcher bound one to it) uses that
// one. Throws InputError when the local rank is malformed or this node has no such GPU.
int local_gpu(int rank, int gpu_count, const EnvLookup& env = process_env);

}  // namespace zb::exec::cuda
