// zbexec's CUDA flags (--devices, --precision, --sm-partition) and building the backend from them.
#pragma once

#include <boost/program_options.hpp>

#include <memory>
#include <string>

#include "exec/backend.h"
#include "exec/backends.h"
#include "sim/schedule/schedule.h"

namespace zb::exec::cuda {

// --devices --precision --sm-partition: kept with the other backends' flags (exec/backends.h).
using CudaFlags = BackendFlags;

// Adds --devices --precision --sm-partition (used with --backend cuda).
void add_cuda_options(boost::program_options::options_description& options, CudaFlags& flags);

// The CUDA backend for a run with `devices` pipeline devices: all in this process (`group` null)
// or one per process of `group` (world == devices; --devices empty or cuda:G, see local_gpu.h).
// Prints one line describing the GPUs to stdout and any fallback warning to stderr (the CLI's
// job, not the backend's). Throws InputError for bad flags before touching a GPU.
std::unique_ptr<Backend> make_cuda_backend(const CudaFlags& flags, int devices,
                                           ProcessGroup* group = nullptr);

// NVTX ranges named after the schedule's actions when `backend` is the CUDA backend; else nothing.
void label_actions(Backend& backend, const zb::Schedule& schedule);

}  // namespace zb::exec::cuda
