// Turning the explorer's problem and choice of schedules into traces: generate, check, evaluate;
// a schedule that cannot be made becomes a result with an error, never an exception.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "sim/core/generators/generator_registry.h"
#include "sim/core/problem.h"
#include "sim/core/problem_spec.h"
#include "sim/core/schedule.h"
#include "sim/core/trace.h"
#include "gui/viewer_core/engines.h"
#include "gui/viewer_core/model_presets.h"

namespace zb::view {

struct RunResult {
  std::string name;
  std::optional<Trace> trace;           // absent when `error` says why
  std::string error;
  std::optional<double> memory_limit;   // the problem's limit, for the memory chart and the status
};

// Generates with the registry, then as run_schedule.
RunResult run_generator(const GeneratorRegistry& registry, const std::string& name, const Problem& problem,
                        const EngineFn& engine = {});

// Checks completeness, order and deadlock (not the memory limit: a schedule over the limit is still
// drawn, with the limit, and flagged in the metrics table), then runs it on `engine` (empty: the
// evaluator). Metrics are filled either way.
RunResult run_schedule(const Problem& problem, const Schedule& schedule, const EngineFn& engine = {});

// The spec generator `info` runs on, by zbsim compare's rule (catalog::spec_for_generator): its
// natural chunk count and placement with the per-device costs split over the chunks, so every
// schedule does the same total work. With a model, the costs are derived again for that shape
// (they would otherwise be per stage for the panel's chunk count and fit no other); the fields in
// `explicit_fields` keep the spec's values. Nullopt with `reason` when the spec cannot be reshaped
// (costs given per stage for another chunk count), as zbsim compare's "unsupported" row.
std::optional<ProblemSpec> spec_for_schedule(const ProblemSpec& spec, const GeneratorInfo& info,
                                             const std::optional<ModelChoice>& model,
                                             const std::set<std::string>& explicit_fields, std::string& reason);

// The spec reshaped to what a schedule file implies: its device count, microbatch count (largest
// microbatch + 1), chunk count (stated, else largest chunk + 1) and placement (when stated).
// Per-device or per-stage arrays that no longer fit are reduced to their first value; scalars are
// kept.
ProblemSpec spec_fitting_schedule(ProblemSpec spec, const Schedule& schedule);

}  // namespace zb::view
