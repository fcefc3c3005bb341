// The backends zbexec can run on (cpu; cuda when built with it), their flags, and making one.
#pragma once

#include <boost/program_options.hpp>

#include <memory>
#include <string>
#include <string_view>

#include "exec/runtime/backend.h"
#include "exec/runtime/backend_flags.h"
#include "sim/core/schedule.h"

namespace zb::exec {

class ProcessGroup;

// Adds the flags of the backends this build has (none for a build without CUDA).
void add_backend_options(boost::program_options::options_description& options, BackendFlags& flags);

// The one place that chooses a backend by name: "cpu", or "cuda" when this build has it.
// `devices` pipeline devices, all in this process (`group` null) or one per rank of `group`
// (world == devices). Throws InputError for an unknown name, a backend this build lacks, or bad
// flags.
std::unique_ptr<Backend> make_backend(std::string_view name, int devices, const BackendFlags& flags = {},
                                      ProcessGroup* group = nullptr);

// NVTX ranges named after the schedule's actions when `backend` is the CUDA backend; else nothing.
void label_actions(Backend& backend, const zb::Schedule& schedule);

}  // namespace zb::exec
