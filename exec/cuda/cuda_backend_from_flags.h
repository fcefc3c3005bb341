// The CUDA backend built from its flags (--devices, --precision, --sm-partition; exec/runtime/backend_flags.h).
#pragma once

#include <memory>
#include <string>

#include "exec/runtime/backend.h"
#include "exec/runtime/backend_flags.h"
#include "sim/core/schedule.h"

namespace zb::exec {
class ProcessGroup;
}  // namespace zb::exec

namespace zb::exec::cuda {

using CudaFlags = BackendFlags;

// The CUDA backend for a run with `devices` pipeline devices: all in this process (`group` null)
// or one per process of `group` (world == devices; --devices empty or cuda:G, see local_gpu.h).
// Prints one line describing the GPUs to stdout and any fallback warning to stderr (the CLI's
// job, not the backend's). Throws InputError for bad flags before touching a GPU.
std::unique_ptr<Backend> make_cuda_backend(const CudaFlags& flags, int devices,
                                           ProcessGroup* group = nullptr);

// NVTX ranges named after the schedule's actions when `backend` is the CUDA backend; else nothing.
void label_actions(Backend& backend, const zb::Schedule& schedule);

}  // namespace zb::exec::cuda
