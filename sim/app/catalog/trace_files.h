// Reading trace files: our trace JSON (every engine and zbexec write it), torch.profiler traces of
// PyTorch's pipeline runtime (one file per rank) and Nsight Systems SQLite exports of it (one per
// rank, or one holding every process), told apart by content. The one reader zbsim, zbview and
// Python use.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "sim/core/trace.h"

namespace zb::catalog {

enum class TraceFileKind { ours, torch_profiler, other };

// Ours: an object with "spans"; torch.profiler: is_torch_profiler_trace (torch_profiler_trace.h).
TraceFileKind trace_file_kind(const nlohmann::json& document);

// One trace from the files: one file of ours, or the torch.profiler and Nsight Systems files of one
// run (any order). Throws InputError naming the file: malformed, none of these kinds, or ours mixed
// with others.
Trace read_trace_files(const std::vector<std::string>& paths);

}  // namespace zb::catalog
