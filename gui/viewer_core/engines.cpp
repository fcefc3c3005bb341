// The engines the explorer can run schedules on (see engines.h).
#include "gui/viewer_core/engines.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "sim/app/catalog/engines.h"

namespace zb::view {

std::string default_clusters_dir() {
  if (const char* dir = std::getenv("ZB_CLUSTERS_DIR")) return dir;
  return std::string(ZB_SOURCE_DIR) + "/models/clusters";
}

std::vector<EngineOption> viewer_engines(const std::string& clusters_dir) {
  std::vector<EngineOption> engines;
  engines.push_back({"evaluator", {}, {}});
  if (!catalog::simgrid_available()) return engines;
  auto simgrid_on = [](std::string label, std::string cluster) {
    // The cluster file is read per run: edits apply at once.
    catalog::EngineOptions options;
    options.engine = "simgrid";
    options.cluster = std::move(cluster);
    options.steps = 1;  // one step, like the evaluator's trace beside it
    EngineFn run = [options](const Problem& problem, const Schedule& schedule) {
      return catalog::run_engine(problem, schedule, options).trace;
    };
    return EngineOption{std::move(label), std::move(run), options};
  };
  engines.push_back(simgrid_on("SimGrid (ideal network)", "ideal"));
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(clusters_dir, error)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) engines.push_back(simgrid_on("SimGrid: " + path.stem().string(), path.string()));
  return engines;
}

std::string engine_warning(const EngineOption& engine, const ProblemSpec& spec) {
  if (engine.is_evaluator()) return "";
  return catalog::engine_warning(spec, engine.options);
}

}  // namespace zb::view
