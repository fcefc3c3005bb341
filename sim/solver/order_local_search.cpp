// First-improvement local search over moves of short blocks of actions within a device's order.
#include "sim/solver/detail/order_local_search.h"

#include <algorithm>
#include <array>
#include <vector>

#include "sim/support/error.h"
#include "sim/core/memory.h"
#include "sim/solver/detail/list_timing.h"
#include "sim/solver/detail/time_grid.h"
#include "sim/solver/detail/split_pass.h"

namespace zb {

namespace {

// What a move is judged by: the span first, then a weighted sum of the actions' ends. The span
// alone sits on plateaus (the longest stage waits on another, and a move elsewhere changes nothing
// it sees); the ends show a move that makes work earlier. No one weighting is best everywhere
// (1.5B costs, 100,000 timings, moves of one action, gap to the bound by the forwards' ends /
// forwards' and backwards' / all / the cycle below: p=8 m=32 1.5p from zb-auto 0.29 / 0.20 / 0.73 /
// 0.14%; p=16 m=48 1.5p from the capped 1F1B order 0.72 / 0.09 / 0.58 / 0.38%), so the search
// cycles through the three, each descent starting where the last one stopped. The sum of the
// stage spans was tried too and stalls at once (p=8 m=16 1.25p: no move from the capped 1F1B
// start).
struct Score {
  Ticks span = 0;
  Ticks ends = 0;
  bool operator<(const Score& other) const { return span != other.span ? span < other.span : ends < other.ends; }
};
using Weights = std::array<Ticks, kSplitPassCount>;  // [split_index(pass)]
constexpr std::array<Weights, 3> kPhases = {{{1, 0, 0}, {1, 1, 0}, {1, 1, 1}}};

constexpr int kLongestBlock = 3;  // consecutive actions moved as one (descend)

class Searcher {
 public:
  Searcher(const Problem& problem, double memory_limit)
      : problem_(problem), ticks_(stage_ticks(problem, TimeGrid(problem))), limit_(memory_limit) {
    for (int s = 0; s < problem.devices; ++s) {
      delta_.push_back({memory_delta(problem, Pass::F, s).net(), memory_delta(problem, Pass::B, s).net(),
                        memory_delta(problem, Pass::W, s).net()});
    }
  }

  // False when the order deadlocks.
  bool score(const Schedule& schedule, const Weights& weights, Score& out) const {
    try {
      const ListSpanTicks timed = list_spans_ticks(problem_, ticks_, schedule);
      out.span = timed.span;
      out.ends = 0;
      for (std::size_t k = 0; k < 3; ++k) out.ends += weights[k] * timed.end_sum[k];
      return true;
    } catch (const ScheduleError&) {
      return false;
    }
  }

  // Whether the device's running memory stays within the limit (fits_limit, memory.h's rule).
  bool device_fits(int device, const std::vector<Action>& order) const {
    if (limit_ < 0) return true;
    const auto& delta = delta_[static_cast<std::size_t>(device)];
    double memory = 0;
    for (const Action& action : order) {
      memory += delta[static_cast<std::size_t>(split_index(action.pass))];
      if (!fits_limit(memory, limit_)) return false;
    }
    return true;
  }

 private:
  const Problem& problem_;
  StageTicks ticks_;
  double limit_;
  std::vector<std::array<double, kSplitPassCount>> delta_;
};

// Whether `moving` may pass over `other` on one device (later: to after it): another pass, and of
// its own microbatch only where F, B, W stay in that order.
bool may_pass(const Action& moving, const Action& other, bool later) {
  if (moving.pass == other.pass) return false;
  if (moving.microbatch != other.microbatch) return true;
  const int a = split_index(moving.pass), b = split_index(other.pass);
  return later ? a > b : a < b;
}

// Moves the block of `length` actions at i of `order` by `distance` places (later when > 0), the
// actions it passes going to the other side of it; a second call with -distance undoes it.
void move_block(std::vector<Action>& order, int i, int length, int distance) {
  const auto at = [&](int k) { return order.begin() + k; };
  if (distance > 0) {
    std::rotate(at(i), at(i + length), at(i + length + distance));
  } else {
    std::rotate(at(i + distance), at(i), at(i + length));
  }
}

// First-improvement descent from `schedule` (scored `current` under `weights`) until no move
// improves it or the budget is spent. Blocks of 1 to kLongestBlock consecutive actions move: a
// B with the W after it, say, which a move of one action at a time cannot shift without passing
// through a worse order (1.5B costs, capped 1F1B start, 100,000 timings: p=16 m=48 1.5p 0.38% ->
// 0.00%, m=64 0.08% -> 0.00% with blocks of up to 3; 2 and 4 stop at 0.20% and 0.06% there).
void descend(const Searcher& searcher, const Weights& weights, Schedule& schedule, Score& current, int window,
             std::int64_t limit, LocalSearchResult& counts) {
  const int p = static_cast<int>(schedule.devices.size());
  for (bool improved = true; improved && counts.evaluations < limit;) {
    improved = false;
    for (int s = 0; s < p && counts.evaluations < limit; ++s) {
      auto& order = schedule.devices[static_cast<std::size_t>(s)];
      const int n = static_cast<int>(order.size());
      for (int length = 1; length <= kLongestBlock; ++length) {
        for (int i = 0; i + length <= n && counts.evaluations < limit; ++i) {
          for (const int direction : {-1, 1}) {
            for (int d = 1; d <= window && counts.evaluations < limit; ++d) {
              // The action the block passes at this distance: every block action must be allowed past it.
              const int passed = direction > 0 ? i + length - 1 + d : i - d;
              if (passed < 0 || passed >= n) break;
              const Action& other = order[static_cast<std::size_t>(passed)];
              const bool allowed = std::all_of(order.begin() + i, order.begin() + i + length,
                                               [&](const Action& a) { return may_pass(a, other, direction > 0); });
              if (!allowed) break;
              move_block(order, i, length, direction * d);
              Score trial;
              bool kept = false;
              if (searcher.device_fits(s, order)) {
                ++counts.evaluations;
                kept = searcher.score(schedule, weights, trial) && trial < current;
              }
              if (kept) {
                current = trial;
                ++counts.moves;
                improved = true;
                break;  // the block has moved; go on from the next position
              }
              // Undo: the block now starts d places away.
              move_block(order, direction > 0 ? i + d : i - d, length, -direction * d);
            }
          }
        }
      }
    }
  }
}

}  // namespace

LocalSearchResult improve_order_locally(const Problem& problem, const Schedule& start, double memory_limit,
                                        std::int64_t evaluation_limit, int window) {
  if (problem.chunks != 1) throw InputError("local search: one chunk per device only");
  // The budget is also one of actions timed: that of `evaluation_limit` timings at p=16 m=64.
  evaluation_limit = std::min(evaluation_limit, timings_of_equal_work(problem, evaluation_limit));
  Searcher searcher(problem, memory_limit);
  LocalSearchResult result;
  result.schedule = start;
  Score current;
  if (!searcher.score(result.schedule, kPhases[0], current)) throw ScheduleError("local search: the start deadlocks");
  ++result.evaluations;
  // Each phase descends from where the last one stopped, so the span never rises; the cycle ends
  // when a whole round of phases leaves the span where it was.
  for (Ticks before = current.span + 1; current.span < before && result.evaluations < evaluation_limit;) {
    before = current.span;
    for (const Weights& weights : kPhases) {
      if (result.evaluations >= evaluation_limit) break;
      searcher.score(result.schedule, weights, current);
      ++result.evaluations;
      descend(searcher, weights, result.schedule, current, window, evaluation_limit, result);
    }
  }
  result.span = list_timing(problem, result.schedule).span;
  return result;
}

}  // namespace zb
