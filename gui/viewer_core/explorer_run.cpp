// Turning the explorer's problem and choice of schedules into traces (see explorer_run.h).
#include "gui/viewer_core/explorer_run.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "sim/app/catalog/run_row.h"
#include "sim/support/error.h"
#include "sim/core/limits.h"
#include "sim/core/evaluator.h"
#include "sim/core/validator.h"


namespace zb::view {

namespace {

// Keeps the first few lines of a long report (a deadlock grid can be large) for a table cell.
std::string first_lines(const std::string& text, int lines) {
  std::size_t pos = 0;
  for (int i = 0; i < lines; ++i) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return text;
    ++pos;
  }
  return text.substr(0, pos - 1) + " ...";
}

void fit_array(std::vector<double>& values, std::size_t devices, std::size_t stages) {
  if (values.size() <= 1 || values.size() == devices || values.size() == stages) return;
  values.resize(1);
}

}  // namespace

RunResult run_schedule(const Problem& problem, const Schedule& schedule, const EngineFn& engine) {
  RunResult result;
  result.name = schedule.name;
  result.memory_limit = problem.memory_limit();
  try {
    const ValidationReport report = check_schedule(problem, schedule, MemoryCheck::skip);
    if (!report.ok()) {
      result.error = first_lines(report.message(), 3);
      return result;
    }
    Trace trace = engine ? engine(problem, schedule) : evaluate(problem, schedule);
    if (trace.metrics.device_span.empty()) trace.metrics = compute_metrics(trace, problem.work());
    if (trace.meta.schedule.empty()) trace.meta.schedule = schedule.name;
    if (trace.meta.engine.empty()) trace.meta.engine = "eval";
    result.trace = std::move(trace);
  } catch (const std::exception& e) {
    // Engines run on worker threads: nothing may escape, whatever it is.
    result.error = first_lines(e.what(), 3);
  }
  return result;
}

RunResult run_generator(const GeneratorRegistry& registry, const std::string& name, const Problem& problem,
                        const EngineFn& engine) {
  Schedule schedule;
  try {
    schedule = generate(registry, name, problem);
  } catch (const std::exception& e) {
    RunResult result;
    result.name = name;
    result.error = first_lines(e.what(), 3);
    result.memory_limit = problem.memory_limit();
    return result;
  }
  if (schedule.name.empty()) schedule.name = name;
  RunResult result = run_schedule(problem, schedule, engine);
  result.name = name;
  return result;
}

std::optional<ProblemSpec> spec_for_schedule(const ProblemSpec& spec, const GeneratorInfo& info,
                                             const std::optional<ModelChoice>& model,
                                             const std::set<std::string>& explicit_fields, std::string& reason) {
  if (!model) return catalog::spec_for_generator(spec, info, reason);
  // The model's costs are about to be derived anew: the per-stage values it gave for the panel's
  // shape must not stop the reshaping.
  ProblemSpec base = spec;
  using Costs = std::vector<double> ProblemSpec::*;
  const std::pair<const char*, Costs> derived[] = {{"t_f", &ProblemSpec::t_f},       {"t_b", &ProblemSpec::t_b},
                                                   {"t_w", &ProblemSpec::t_w},       {"t_comm", &ProblemSpec::t_comm},
                                                   {"mem_f", &ProblemSpec::mem_f},   {"mem_b", &ProblemSpec::mem_b},
                                                   {"mem_w", &ProblemSpec::mem_w},   {"t_offload", &ProblemSpec::t_offload}};
  for (const auto& [name, field] : derived) {
    if (!explicit_fields.contains(name) && !(base.*field).empty()) (base.*field).resize(1);
  }
  auto shaped = catalog::spec_for_generator(base, info, reason);
  if (!shaped) return shaped;
  return derive_model_costs(*shaped, *model, explicit_fields);
}

ProblemSpec spec_fitting_schedule(ProblemSpec spec, const Schedule& schedule) {
  const int microbatches = schedule.microbatch_count();
  const int chunks = schedule.chunk_count();
  const int devices = schedule.device_count();
  check_action_count(devices, chunks, microbatches, schedule.name);  // before the per-stage arrays
  const bool same_shape = devices == spec.devices && chunks == spec.chunks;
  spec.devices = devices;
  spec.microbatches = std::max(microbatches, 1);
  spec.chunks = chunks;
  if (!same_shape) {
    const auto p = static_cast<std::size_t>(devices);
    const auto stages = static_cast<std::size_t>(devices * chunks);
    for (auto* values : {&spec.t_f, &spec.t_b, &spec.t_w, &spec.t_bw, &spec.t_comm, &spec.mem_f, &spec.mem_b, &spec.mem_w}) {
      fit_array(*values, p, stages);
    }
    if (chunks == 1) spec.placement.reset();
  }
  if (schedule.placement) spec.placement = schedule.placement;  // the file says what it was made for
  return spec;
}

}  // namespace zb::view
