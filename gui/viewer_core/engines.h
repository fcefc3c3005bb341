// The engines the explorer can run schedules on: the evaluator (instant, always there) and, when
// zbview was built with the SimGrid part, SimGrid on the idealised network or on a cluster file.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/app/catalog/engines.h"
#include "sim/core/problem.h"
#include "sim/core/problem_spec.h"
#include "sim/core/schedule.h"
#include "sim/core/trace.h"

namespace zb::view {

using EngineFn = std::function<Trace(const Problem&, const Schedule&)>;

struct EngineOption {
  std::string label;  // shown in the panel and appended to group labels: "SimGrid (ideal network)"
  EngineFn run;       // empty: the evaluator
  catalog::EngineOptions options;  // what `run` runs with (the evaluator's defaults when empty)
  bool is_evaluator() const { return !run; }
};

// What the user should hear before trusting this engine's runs of `spec` (catalog::engine_warning,
// as zbsim simulate prints it: a cluster with 0-byte transfers), or "".
std::string engine_warning(const EngineOption& engine, const ProblemSpec& spec);

// The evaluator first; then, with SimGrid, the idealised network and one entry per cluster file
// (*.json, sorted by name) in `clusters_dir` (the models/clusters folder; missing is fine).
std::vector<EngineOption> viewer_engines(const std::string& clusters_dir);

// Where the cluster presets live: $ZB_CLUSTERS_DIR, else the source tree's models/clusters.
std::string default_clusters_dir();

}  // namespace zb::view
