// zb-auto for every placement: the best schedule this build can make under a memory limit.
#pragma once

#include <optional>
#include <string>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

struct AutoResult {
  Schedule schedule;
  double span = 0;          // largest device span (the evaluator's)
  double memory_limit = 0;  // the absolute limit the schedule respects
  double peak_memory = 0;   // the largest device peak of the schedule
  std::string chosen;       // which candidate won: "greedy", "zb-v", "zb-v-h", "zb-i", ...
};

// One chunk per device: the memory-aware greedy heuristic (section 5). The V (chunks 2): the
// greedy ZB-V at the limit, the handcrafted ZB-V, and v-auto (the building-block V under the
// limit, down to a third of 1F1B's memory). Interleaved: zb-i and 1f1b-i when they fit. The
// shortest span on the time grid (time_grid.h) wins; at an equal span the smaller peak, then the
// earlier candidate. Without a limit every forward fits. Throws ScheduleError naming the limit
// when no candidate fits it. One chunk per device is monotone in the limit (a larger limit never
// gives a longer span); the multi-chunk candidates are taken as they come at the limit.
AutoResult auto_schedule(const Problem& problem, std::optional<double> memory_limit = std::nullopt);

}  // namespace zb
