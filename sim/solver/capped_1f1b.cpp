// Memory-capped 1F1B orders and the descent over their warm-up depths.
#include "sim/solver/detail/capped_1f1b.h"

#include <algorithm>
#include <cmath>
#include <deque>

#include "sim/support/error.h"
#include "sim/core/memory.h"
#include "sim/core/validator.h"
#include "sim/solver/detail/list_timing.h"

namespace zb {

std::vector<Action> capped_1f1b_stage(const Problem& problem, int stage, int warmup, double memory_limit,
                                      bool eager_w) {
  const int m = problem.microbatches;
  const auto si = static_cast<std::size_t>(stage);
  const double mem_f = problem.mem_f[si], mem_b = problem.mem_b[si], mem_w = problem.mem_w[si];
  std::vector<Action> order;
  order.reserve(static_cast<std::size_t>(3 * m));
  std::deque<int> pending_w;
  double held = 0;
  int next_f = 0;
  auto push_w = [&]() {
    order.push_back({Pass::W, pending_w.front(), 0});
    pending_w.pop_front();
    held += mem_w;
  };
  for (; next_f < std::min(warmup, m); ++next_f) {
    order.push_back({Pass::F, next_f, 0});
    held += mem_f;
  }
  for (int k = 0; k < m; ++k) {
    order.push_back({Pass::B, k, 0});
    held += mem_b;
    pending_w.push_back(k);
    if (next_f < m) {
      if (eager_w) push_w();
      while (memory_limit >= 0 && !pending_w.empty() && !fits_limit(held + mem_f, memory_limit)) push_w();
      order.push_back({Pass::F, next_f++, 0});
      held += mem_f;
    } else if (k + 1 < m && !pending_w.empty()) {
      push_w();
    }
  }
  while (!pending_w.empty()) push_w();
  return order;
}

namespace {

// A point of the descent: per stage its warm-up depth and W rule.
struct Shape {
  std::vector<int> warmup;
  std::vector<bool> eager_w;
};

// The span of the order of this shape, or nullopt when it deadlocks or exceeds the limit.
std::optional<double> span_of(const Problem& problem, const Shape& shape, double memory_limit, Schedule& schedule) {
  schedule.devices.assign(static_cast<std::size_t>(problem.devices), {});
  for (int s = 0; s < problem.devices; ++s) {
    const auto si = static_cast<std::size_t>(s);
    schedule.devices[si] = capped_1f1b_stage(problem, s, shape.warmup[si], memory_limit, shape.eager_w[si]);
  }
  if (memory_limit >= 0 && first_over_limit(peak_memory_by_order(problem, schedule), memory_limit)) return std::nullopt;
  try {
    return list_timing(problem, schedule).span;
  } catch (const ScheduleError&) {
    return std::nullopt;
  }
}

// Strictly shorter beyond rounding noise: the descent cannot cycle.
bool shorter(double a, double b) { return a < b - 1e-9 * std::max(1.0, b); }

}  // namespace

std::optional<Capped1f1bResult> best_capped_1f1b(const Problem& problem, double memory_limit,
                                                 std::int64_t evaluation_limit) {
  if (problem.chunks != 1) throw InputError("capped 1F1B: one chunk per device only");
  const int p = problem.devices, m = problem.microbatches;
  // The budget is also one of actions timed, that of 5,000 timings at p=16 m=64 (~0.1 s), so that a
  // p=2000 problem stops after its four starts and a few moves instead of running for minutes.
  evaluation_limit = std::min(evaluation_limit, std::max<std::int64_t>(4, timings_of_equal_work(problem, 5000)));
  const auto stages = static_cast<std::size_t>(p);
  // The deepest warm-up a stage's memory holds (forwards allocate; nothing frees before a B).
  std::vector<int> cap(stages, m);
  for (std::size_t s = 0; s < stages; ++s) {
    if (memory_limit >= 0 && problem.mem_f[s] > 0) {
      cap[s] = std::clamp(static_cast<int>(std::floor(memory_limit * (1 + 1e-9) / problem.mem_f[s])), 1, m);
    }
  }
  std::optional<Capped1f1bResult> best;
  Schedule trial;
  std::int64_t evaluations = 0;
  // Four starts: 1F1B's depths p - s or depths falling evenly from the cap to 1 (what the optimum
  // looks like where memory binds on the first stages), each with lazy or eager W everywhere.
  for (const bool eager : {false, true}) {
    for (const bool even : {false, true}) {
      Shape shape{std::vector<int>(stages), std::vector<bool>(stages, eager)};
      for (int s = 0; s < p; ++s) {
        const int top = cap[static_cast<std::size_t>(s)];
        const int falling = top - static_cast<int>(std::lround(static_cast<double>(s) * top / p));
        shape.warmup[static_cast<std::size_t>(s)] = std::clamp(even ? falling : p - s, 1, top);
      }
      std::optional<double> current = span_of(problem, shape, memory_limit, trial);
      ++evaluations;
      if (!current) continue;
      // Moves on one stage at a time: its depth by +-1 or +-2, or its W rule flipped.
      for (bool improved = true; improved && evaluations < evaluation_limit;) {
        improved = false;
        for (int s = 0; s < p && evaluations < evaluation_limit; ++s) {
          const auto si = static_cast<std::size_t>(s);
          for (const int move : {1, -1, 2, -2, 0}) {
            if (evaluations >= evaluation_limit) break;
            Shape moved = shape;
            if (move == 0) {
              moved.eager_w[si] = !moved.eager_w[si];
            } else {
              moved.warmup[si] += move;
              if (moved.warmup[si] < 1 || moved.warmup[si] > cap[si]) continue;
            }
            const std::optional<double> span = span_of(problem, moved, memory_limit, trial);
            ++evaluations;
            if (span && shorter(*span, *current)) {
              shape = std::move(moved);
              current = span;
              improved = true;
            }
          }
        }
      }
      if (!best || shorter(*current, best->span)) {
        Capped1f1bResult found;
        span_of(problem, shape, memory_limit, found.schedule);
        found.schedule.name = "zb-ilp";
        found.span = *current;
        found.warmup = shape.warmup;
        found.eager_w = shape.eager_w;
        best = std::move(found);
      }
    }
  }
  if (best) best->evaluations = evaluations;
  return best;
}

}  // namespace zb
