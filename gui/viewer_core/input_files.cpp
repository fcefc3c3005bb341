// The files zbview opens (see input_files.h).
#include "gui/viewer_core/input_files.h"

#include <fmt/format.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "sim/app/catalog/schedule_files.h"
#include "sim/app/catalog/trace_files.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/formats/nsys_report.h"
#include "sim/formats/torch_profiler_trace.h"
#include "sim/formats/trace_json.h"
#include "gui/viewer_core/model_presets.h"
#include "sim/app/catalog/scenario.h"
#include "sim/support/json_text.h"

namespace zb::view {

namespace {

std::optional<double> limit_of_embedded_problem(const Trace& trace, std::string_view source) {
  if (trace.meta.problem_json.empty()) return std::nullopt;
  try {
    const auto object = nlohmann::json::parse(trace.meta.problem_json);
    return problem_spec_from_json(object, source).build(source).memory_limit();
  } catch (const std::exception&) {
    // The problem is informational here: a trace without a readable one is still a trace.
    return std::nullopt;
  }
}

// The same reader as zbsim's (sim/app/catalog/scenario.h): the same fields, defaults and errors.
ScenarioInput scenario_from_json(const nlohmann::json& object, std::string_view source) {
  const std::string path(source);
  const std::string base_dir = std::filesystem::path(path).parent_path().string();
  Scenario read = zb::scenario_from_json(object, path, base_dir.empty() ? "." : base_dir);
  zb::derive_model_costs(read);
  ScenarioInput scenario{read.name.empty() ? file_name_of(source) : read.name, read.spec, read.schedules};
  // Validate now so that a bad scenario is reported when it is opened, not on the next redraw.
  (void)scenario.spec.build(fmt::format("{}: problem", source));
  return scenario;
}

}  // namespace

std::string file_name_of(std::string_view path) {
  const auto slash = path.find_last_of('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string trace_label(const Trace& trace, std::string_view source) {
  const std::string schedule = trace.meta.schedule.empty() ? std::string("trace") : trace.meta.schedule;
  const std::string engine = trace.meta.engine.empty() ? std::string("eval") : trace.meta.engine;
  return fmt::format("{} ({}, {})", schedule, engine, file_name_of(source));
}

LoadedInput parse_input_text(std::string_view text, std::string_view source) {
  LoadedInput input;
  input.source = std::string(source);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) throw InputError(fmt::format("{}: the file is empty", source));

  if (text[first] != '{' && text[first] != '[') {
    // Our text form or a PyTorch pipeline CSV: the catalog's reader tells them apart.
    input.kind = InputKind::schedule;
    input.schedule = catalog::parse_schedule_file(text, std::string(source), &input.note);
    if (input.schedule->name.empty() || input.schedule->name == source) input.schedule->name = file_name_of(source);
    return input;
  }

  const nlohmann::json object = parse_json(text, source);
  try {
    const catalog::TraceFileKind trace_kind = catalog::trace_file_kind(object);
    if (trace_kind == catalog::TraceFileKind::torch_profiler) {
      input.kind = InputKind::trace;
      input.profiled_rank = read_profiled_rank(object, source);
      input.trace = profiled_trace({&*input.profiled_rank, 1});
    } else if (trace_kind == catalog::TraceFileKind::ours) {
      input.kind = InputKind::trace;
      input.trace = trace_from_json(object, source);
      input.trace_memory_limit = limit_of_embedded_problem(*input.trace, source);
    } else if (object.contains("problem") || is_model_driven(object)) {
      input.kind = InputKind::scenario;
      input.scenario = scenario_from_json(object, source);
    } else if (object.contains("devices") && object["devices"].is_array()) {
      input.kind = InputKind::schedule;
      input.schedule = catalog::parse_schedule_file(text, std::string(source));
      if (input.schedule->name.empty() || input.schedule->name == source) input.schedule->name = file_name_of(source);
    } else if (object.is_object() && object.contains("traceEvents")) {
      // Our Chrome trace (zbsim --chrome) is for Perfetto: it drops what a timeline needs back.
      throw InputError(fmt::format(
          "{}: a Chrome trace, but not torch.profiler's (no \"schemaVersion\" or \"distributedInfo\"): zbview "
          "opens torch.profiler traces and our trace JSON (zbsim simulate --trace FILE, zbexec run --trace FILE), "
          "not the Chrome trace written for Perfetto (--chrome)", source));
    } else {
      throw InputError(fmt::format(
          "{}: not a trace (no \"spans\", no torch.profiler \"traceEvents\"), a scenario (no \"problem\") or a "
          "schedule (no \"devices\")", source));
    }
  } catch (const nlohmann::json::exception& e) {
    // A field of the wrong JSON type deep inside a reader: still the user's file, still exit code 2.
    throw InputError(fmt::format("{}: {}", source, e.what()));
  }
  return input;
}

LoadedInput load_input_file(const std::string& path) {
  // An Nsight Systems export (every process it holds, as one trace), told by its first bytes: it
  // is read by SQLite, never whole into memory.
  if (is_sqlite_path(path)) {
    LoadedInput input;
    input.source = path;
    input.kind = InputKind::trace;
    input.trace = catalog::read_trace_files({path});
    return input;
  }
  return parse_input_text(read_file(path), path);
}

std::vector<LoadedInput> load_input_files(const std::vector<std::string>& paths) {
  std::vector<LoadedInput> inputs;
  std::vector<ProfiledRank> ranks;
  std::size_t run_at = 0;  // where the run's one input goes
  for (const std::string& path : paths) {
    LoadedInput input = load_input_file(path);
    if (input.profiled_rank) {
      if (ranks.empty()) run_at = inputs.size();
      ranks.push_back(std::move(*input.profiled_rank));
      continue;
    }
    inputs.push_back(std::move(input));
  }
  if (!ranks.empty()) {
    LoadedInput run;
    run.kind = InputKind::trace;
    run.source = ranks.size() == 1 ? ranks.front().source
                                   : fmt::format("{} + {} more", ranks.front().source, ranks.size() - 1);
    run.trace = profiled_trace(ranks);
    inputs.insert(inputs.begin() + static_cast<std::ptrdiff_t>(run_at), std::move(run));
  }
  return inputs;
}

}  // namespace zb::view
