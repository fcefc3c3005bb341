// zbview's command line: files to open, the explorer's problem flags (as zbsim's), headless output.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/app/catalog/given_field.h"
#include "sim/core/problem_spec.h"

namespace zb::view {

struct ViewerOptions {
  bool help = false;
  std::vector<std::string> files;      // positional: any kind, recognised by content
  std::optional<std::string> scenario;
  std::optional<std::string> schedules;  // "1f1b,zb-h1"
  // Problem flags (zbsim's, from the catalog), applied over the scenario or the default problem.
  std::vector<catalog::GivenField> problem_flags;
  std::optional<std::string> model, hardware;  // model preset (models/transformers, models/hardware)
  int microbatch_size = 1;
  std::optional<std::string> engine;      // "eval" or "simgrid", as zbsim simulate's --engine
  std::optional<std::string> cluster;     // with simgrid: a cluster preset name or "ideal" (default)
  std::optional<std::string> screenshot;  // PNG of the whole window, then exit
  std::optional<std::string> svg;         // SVG of the timeline, then exit
  int width_px = 1400;
  int height_px = 900;
  bool show_memory = true;
  bool show_arrows = false;
};

// Parses argv after Qt has taken its own options; throws InputError naming the flag and value.
ViewerOptions parse_viewer_args(const std::vector<std::string>& args);
std::string viewer_usage();

// The problem the explorer starts with when nothing else is given: p=4, m=8, unit costs.
ProblemSpec default_problem_spec();
// The schedules the explorer starts with: those of `wanted` that the registry offers.
std::vector<std::string> split_names(const std::string& text);

// The index among `labels` (see viewer_engines) of what --engine and --cluster name, as zbsim
// simulate takes them: "eval"; or "simgrid" on the idealised network ("ideal", the default) or on a
// cluster preset ("1x8-nvlink"). InputError naming the flag and listing the presets.
int find_engine(const std::vector<std::string>& labels, const std::string& engine,
                const std::optional<std::string>& cluster = std::nullopt);

// Applies the problem flags that were given.
ProblemSpec apply_problem_flags(ProblemSpec spec, const ViewerOptions& options);

}  // namespace zb::view
