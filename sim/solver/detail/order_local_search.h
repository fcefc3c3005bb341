// zb-ilp's third start: a local search over each device's order of a schedule (v = 1, split B/W),
// for the upper side of the gap where memory is tight (zb-auto and the capped 1F1B orders leave
// 0.7-1.6% above the lower bound at 1.25p-1.5p on the paper's 1.5B costs, p = 8 and 16).
#pragma once

#include <cstdint>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

struct LocalSearchResult {
  Schedule schedule;
  double span = 0;               // list-scheduled span of `schedule`, in the problem's unit
  std::int64_t evaluations = 0;  // list timings run
  int moves = 0;                 // accepted moves
};

// Moves a block of one to three consecutive actions of one device up to `window` places earlier
// or later, over actions of other passes only (microbatch order within F, B and W stays, the scope
// the order search and the MILP certify over) and never past their own F, B or W. A move is kept
// when the device stays within `memory_limit` (fits_limit; < 0: unlimited), the order does not
// deadlock, and the span on the time grid drops, or stays and a weighted sum of the actions' ends
// drops (so the search crosses the plateaus where the longest stage waits on another): descents
// by the forwards' ends, then the forwards' and backwards', then all, repeated while a round
// shortens the span. First improvement, devices and positions in order: the result depends only
// on the inputs. At most `evaluation_limit` list timings, fewer on large problems (a budget of
// actions timed equal to that many timings at p=16 m=64).
LocalSearchResult improve_order_locally(const Problem& problem, const Schedule& start, double memory_limit,
                                        std::int64_t evaluation_limit, int window = 8);

}  // namespace zb
