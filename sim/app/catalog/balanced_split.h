// The "balanced" split for one schedule: layer partitioning's candidates (models/layer_partition.h),
// even and paper, each run through the evaluator's steady state (the path zbsim simulate takes),
// the fastest that fits device memory chosen.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/layer_partition.h"
#include "sim/app/catalog/scenario.h"
#include "sim/app/catalog/engines.h"
#include "sim/app/catalog/run_row.h"

namespace zb::catalog {

// One split tried: its name ("balanced F+B+W", "balanced F+B", "balanced F", "even", "paper"), its
// layers per stage (empty when the shape cannot take it), the row it ran to and its step time
// (the normal optimizer mode; 0 without metrics).
struct SplitTrial {
  std::string label;
  std::vector<int> layers;
  ResultRow row;
  double step_time = 0;
};

struct SplitChoice {
  Problem shape;  // the generator's problem (p, v, placement) at the even split
  std::vector<models::PartitionPiece> pieces;
  models::PartitionRequest request;  // with the schedule's in-flight moments
  std::vector<SplitTrial> trials;    // the dynamic program's candidates, then even and paper
  int chosen = -1;                   // the fastest trial whose row is ok; -1: none fits
  std::string no_fit;                // why none fits (chosen == -1)
};

// For a model-driven scenario and generator `schedule`: the dynamic program's candidates under
// the memory the schedule's order holds (measured on the even split, or the paper split when even
// cannot be built), then even and paper, each a row through `engine`; ties go to the earlier
// trial. InputError for a direct problem or an unknown schedule.
SplitChoice choose_split(const Scenario& scenario, const std::string& schedule, const EngineOptions& engine);

// Whether the scenario's split is "balanced".
bool has_balanced_split(const Scenario& scenario);

// The scenario with its balanced split replaced by the one choose_split picks for `schedule` (the
// evaluator, default steps), at the generator's shape; nullopt with `reason` when none fits.
std::optional<Scenario> resolve_balanced_split(const Scenario& scenario, const std::string& schedule,
                                               std::string& reason);

// The scenario with split `layers` (a JSON split value: "even", "paper" or a list), its costs
// derived at `shape`'s chunks and placement.
Scenario scenario_with_split(const Scenario& scenario, const nlohmann::json& split, const ProblemSpec& shape);

}  // namespace zb::catalog
