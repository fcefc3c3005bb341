// zb-auto's fallback order (docs/design.md section 5): 1F1B's order with each fused backward split
// into its B and, right after it, its W, with as many forwards in flight as the limit leaves room
// for. It fits every limit some order of split passes fits, where the greedy rounds may not.
#pragma once

#include <optional>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

struct Split1f1b {
  Schedule schedule;
  // The largest memory level the in-flight counts were judged at: every limit from here up to the
  // one given yields the same order, so the next smaller limit worth trying is just below it.
  double accepted_level = 0;
};

// Device d keeps k_d forwards in flight: 1F1B's min(p - d, m), fewer where k_d forwards and one
// B's allocation (recomputation makes mem_b positive) exceed `limit`, and never more than device
// d - 1 keeps (a device that waited for a gradient whose forward the device above has not yet sent
// would deadlock). Its order: F0 .. F(k-1), then B(i) W(i) F(k+i) for each i (F while any is left).
// std::nullopt when even one forward and its B do not fit: then no order of split passes does.
// Requires chunks = 1.
std::optional<Split1f1b> split_1f1b(const Problem& problem, double limit);

}  // namespace zb
