// zb-ilp's exact search for small problems: branch and bound over in-order schedules (v = 1).
#pragma once

#include <cstdint>
#include <optional>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

struct OrderSearchOptions {
  double memory_limit = -1;  // absolute; < 0: unlimited
  // Only spans at most incumbent - step are searched for (step 0: any strictly shorter span). On
  // a time grid every span is a multiple of the step, so nothing between is lost.
  double step = 0;
  double lower_bound = 0;  // a valid bound on every span: the search stops once it is met
  // The budget that decides the result, independent of the machine: search nodes (partial
  // schedules extended by one pass), and the cells of the per-device programs that bound them
  // (a node costs about p m'^3 / 6 cells, m' the microbatches a device has left, so this is what
  // limits large problems).
  std::int64_t node_limit = 2'000'000;
  std::int64_t work_limit = 4'000'000'000;
  double time_limit_s = 60;  // safety net only (wall clock)
};

struct OrderSearchResult {
  // Every in-order schedule was either examined or cut off by a valid bound: the best span
  // (the incumbent's, or `better`'s) is the optimum over in-order schedules.
  bool complete = false;
  std::optional<Schedule> better;  // a strictly shorter schedule than the incumbent, if found
  double span = 0;                 // the best span (list-scheduled)
  // The cut's bound at the root (before any pass is placed): valid over in-order schedules, and
  // at least the per-device program's, since the devices' releases also wait for memory.
  double root_bound = 0;
  std::int64_t nodes = 0;
  std::int64_t work = 0;  // program cells evaluated
  bool stopped_by_nodes = false;  // node or work budget
  bool stopped_by_wall_clock = false;
};

// Depth-first branch and bound over per-device orders that keep microbatch order within F, B and
// W (the space of the MILP, ilp_model.h). A node is a partial order of every device, timed as
// list scheduling times it; a device may be committed to a pass whose input is not yet timed (it
// waits for it, as list scheduling does), so every order is reached exactly once. Nodes are cut
// by a per-device dynamic program over the remaining F/B/W counts (lower_bound.h's, started from
// the node's clock and release times) and by dominance: two nodes with the same counts and
// commitments where one has every clock and every pending release no later. `incumbent_span` is
// the list-scheduled span to beat.
OrderSearchResult search_in_order_schedules(const Problem& problem, double incumbent_span,
                                            const OrderSearchOptions& options);

}  // namespace zb
