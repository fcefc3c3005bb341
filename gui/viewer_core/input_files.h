// The files zbview opens: trace JSON (zbsim, zbexec), torch.profiler traces of PyTorch's pipeline
// runtime (one file per rank), scenario JSON (a "problem" object), schedule text ("d0: F0 F1 B0
// W0 ...") or JSON, and PyTorch pipeline CSVs (compute-only or compute_comms), recognised by
// content rather than by file name.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/problem_spec.h"
#include "sim/core/schedule.h"
#include "sim/formats/torch_profiler_trace.h"
#include "sim/core/trace.h"

namespace zb::view {

enum class InputKind { trace, scenario, schedule };

struct ScenarioInput {
  std::string name;                    // "name" field, else the file name
  ProblemSpec spec;                    // the "problem" object
  std::vector<std::string> schedules;  // "schedules" (names), may be empty
};

struct LoadedInput {
  InputKind kind = InputKind::trace;
  std::string source;  // the path (or the name given to parse_input_text)
  std::optional<Trace> trace;
  std::optional<double> trace_memory_limit;  // from the trace's embedded problem, when it has one
  std::optional<ScenarioInput> scenario;
  std::optional<Schedule> schedule;
  // What the user should know beyond the schedule (what a PyTorch compute_comms CSV held beside
  // compute: catalog::parse_schedule_file's note), or "".
  std::string note;
  // A torch.profiler file: its rank, kept so that the files of one run merge (load_input_files);
  // `trace` is that rank alone.
  std::optional<ProfiledRank> profiled_rank;
};

// Reads and recognises a file; throws InputError naming the path and the problem.
LoadedInput load_input_file(const std::string& path);
// The same for text already in memory; `source` names it in errors.
LoadedInput parse_input_text(std::string_view text, std::string_view source);

// Every file in order; the torch.profiler files among them are one run (a file per rank) and
// become one trace input, where the first of them was. Throws InputError naming the file.
std::vector<LoadedInput> load_input_files(const std::vector<std::string>& paths);

// The label a loaded trace is shown under: "<schedule> (<engine>, <file name>)".
std::string trace_label(const Trace& trace, std::string_view source);

// The last path component ("a/b/c.json" -> "c.json").
std::string file_name_of(std::string_view path);

}  // namespace zb::view
