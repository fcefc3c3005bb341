// zb-ilp's second warm start: 1F1B orders with a warm-up per stage capped by memory, searched by
// coordinate descent over the warm-up depths.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

// One stage's order (v = 1, split B and W): `warmup` forwards, then per microbatch k its B, the
// oldest pending W's while the next F would not fit `memory_limit` (`eager_w`: at least one W per
// B), and the next F; after the last F each B is followed by one pending W, the rest at the end.
// Every pass keeps microbatch order within F, B and W. memory_limit < 0: unlimited.
std::vector<Action> capped_1f1b_stage(const Problem& problem, int stage, int warmup, double memory_limit, bool eager_w);

struct Capped1f1bResult {
  Schedule schedule;
  double span = 0;
  std::vector<int> warmup;    // per stage
  std::vector<bool> eager_w;  // per stage
  std::int64_t evaluations = 0;
};

// The shortest such order found by coordinate descent: from four starts (depths min(cap, p - s)
// as 1F1B's, or falling evenly from the cap to 1; lazy or eager W on every stage), one stage at a
// time moves its depth by +-1 or +-2 (within 1..cap, cap = the forwards its memory holds, at most
// m) or flips its W rule, kept when the span drops; first improvement, stages in order, so the
// result is deterministic. Orders that deadlock or exceed the limit are skipped; nullopt when none
// fits. Where memory is tight this finds what zb-auto's rounds miss: deep warm-ups on the first
// stages and each W right after the B that lets the next F fit (1.5B costs, limit 1.25p: at p=16,
// m=48 and 64 it meets the lower bound, 2.1% and 1.6% below zb-auto). At most `evaluation_limit`
// list timings, fewer on large problems (a budget of actions timed: 5,000 timings of p=16 m=64).
std::optional<Capped1f1bResult> best_capped_1f1b(const Problem& problem, double memory_limit,
                                                 std::int64_t evaluation_limit = 5000);

}  // namespace zb
