// The engines the explorer can run schedules on (see engines.h).
#include "timeline/engines.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#ifdef ZB_VIEW_WITH_SIMGRID
#include "cluster.h"
#include "simgrid_engine.h"
#endif

namespace zb::view {

std::string default_clusters_dir() {
  if (const char* dir = std::getenv("ZB_CLUSTERS_DIR")) return dir;
#ifdef ZB_VIEW_SOURCE_DIR
  return std::string(ZB_VIEW_SOURCE_DIR) + "/models/clusters";
#else
  return "models/clusters";
#endif
}

std::vector<EngineOption> viewer_engines(const std::string& clusters_dir) {
  std::vector<EngineOption> engines;
  engines.push_back({"evaluator", {}});
#ifdef ZB_VIEW_WITH_SIMGRID
  engines.push_back({"SimGrid (ideal network)",
                     [](const Problem& problem, const Schedule& schedule) { return simulate_simgrid(problem, schedule); }});
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(clusters_dir, error)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    const std::string file = path.string();
    engines.push_back({"SimGrid: " + path.stem().string(), [file](const Problem& problem, const Schedule& schedule) {
                         SimgridOptions options;
                         options.cluster = load_cluster_file(file);  // read per run: edits apply at once
                         return simulate_simgrid(problem, schedule, options);
                       }});
  }
#else
  (void)clusters_dir;
#endif
  return engines;
}

}  // namespace zb::view
