// The memory-aware greedy heuristic behind zb-auto, zb-1p and zb-2p (docs/design.md section 5).
#pragma once

#include <array>
#include <optional>
#include <string>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

// The three binary switches of the heuristic; 8 combinations are tried.
struct GreedySwitches {
  bool allow_bubble_before_first_b = true;  // warm-up may take an F that delays the first B
  bool prioritize_b = true;                 // a stage far ahead may skip its F of the round
  bool greedy_gap_fill = true;              // fill gaps smaller than one W when it costs no worse idle

  std::string to_string() const;  // e.g. "bubble+ prio-b+ greedy-"
};

// The 8 variants in the order they are tried (each switch true before false; the first switch
// varies slowest).
std::array<GreedySwitches, 8> greedy_variants();

struct GreedyResult {
  Schedule schedule;
  double span = 0;           // largest device span of this order under list scheduling
  double memory_limit = 0;   // the absolute limit the schedule respects
  double planned_limit = 0;  // the limit the winning variant ran at (<= memory_limit)
  GreedySwitches switches;   // of the winning variant
  int variant = 0;           // index into greedy_variants(); 8 = ZB-H1, 9 = ZB-H2, 10 = split_1f1b
};

// The absolute limit zb-auto uses: `limit` when given, else the problem's, else unlimited
// (every forward fits). Throws ScheduleError (an InputError) when the limit is below one forward
// per stage in flight.
double greedy_memory_limit(const Problem& problem, std::optional<double> limit = std::nullopt);

// One variant at one limit, its decisions on the time grid (time_grid.h); std::nullopt when this
// variant runs out of memory (no W left to free any).
std::optional<GreedyResult> greedy_variant(const Problem& problem, double memory_limit,
                                           const GreedySwitches& switches);

// zb-auto at one chunk per device: the first strictly shortest (span on the time grid) of the 8
// variants at the limit, ZB-H1 and ZB-H2 when they fit it, the fallback split_1f1b (1F1B's order,
// each W right after its B), then each variant and the fallback at every smaller limit where it
// behaves differently (descending, until the lower bound rules out anything shorter). So the span
// never grows with the limit, it is the same in any time unit, and a schedule is found whenever
// any order of split passes fits the limit (where B frees memory: whenever 1F1B fits, no longer).
// Requires v = 1 (linear placement): InputError otherwise.
// Throws ScheduleError naming the limit and the stage when not even one forward and its B fit.
GreedyResult greedy_schedule(const Problem& problem, std::optional<double> memory_limit = std::nullopt);

}  // namespace zb
