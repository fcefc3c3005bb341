// List scheduling of a split-pass order: repeatedly run every device as far as its inputs allow.
#include "sim/solver/detail/list_timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <numeric>

#include "sim/solver/detail/split_pass.h"
#include "sim/support/error.h"

namespace zb {

namespace {
std::size_t idx(int i) { return static_cast<std::size_t>(i); }
// The action's split pass (split_pass.h); a fused BW has none.
Pass split_pass_of(const Action& action) {
  if (action.pass == Pass::BW) throw InputError("solver: fused BW actions are not supported; split B and W");
  return action.pass;
}
constexpr std::size_t kF = split_index(Pass::F);
constexpr std::size_t kB = split_index(Pass::B);

// The costs the rule runs on: the problem's own (double) or the time grid's (Ticks).
template <class Time>
struct Costs {
  std::vector<Time> f, b, w, comm_after;
};

template <class Time>
struct Timed {
  std::vector<std::vector<std::vector<Time>>> end;  // [stage][pass][microbatch]
  std::vector<Time> stage_span;
  Time span = 0;
};

template <class Time>
Timed<Time> run_list(const Problem& problem, const Costs<Time>& costs, const Schedule& schedule) {
  const int p = problem.devices;
  const int m = problem.microbatches;
  if (problem.chunks != 1 || schedule.device_count() != p) {
    throw InputError(fmt::format("solver: schedule has {} devices, problem {} (chunks {})",
                                 schedule.device_count(), p, problem.chunks));
  }
  constexpr Time kNotDone = -1;
  Timed<Time> timing;
  timing.end.assign(idx(p), std::vector<std::vector<Time>>(kSplitPassCount, std::vector<Time>(idx(m), kNotDone)));
  std::vector<std::size_t> next(idx(p), 0);
  std::vector<Time> clock(idx(p), 0);
  std::vector<Time> first_start(idx(p), 0);
  std::size_t remaining = schedule.action_count();
  while (remaining > 0) {
    std::size_t progressed = 0;
    for (int s = 0; s < p; ++s) {
      const auto& list = schedule.devices[idx(s)];
      while (next[idx(s)] < list.size()) {
        const Action& action = list[next[idx(s)]];
        const Pass pass = split_pass_of(action);
        const int i = action.microbatch;
        if (i < 0 || i >= m) throw ScheduleError(fmt::format("solver: microbatch {} out of range", i));
        Time ready = clock[idx(s)];
        if (pass == Pass::F && s > 0) {
          const Time input = timing.end[idx(s - 1)][kF][idx(i)];
          if (input < 0) break;
          ready = std::max(ready, input + costs.comm_after[idx(s - 1)]);
        } else if (pass == Pass::B) {
          if (timing.end[idx(s)][kF][idx(i)] < 0) break;
          if (s + 1 < p) {
            const Time input = timing.end[idx(s + 1)][kB][idx(i)];
            if (input < 0) break;
            ready = std::max(ready, input + costs.comm_after[idx(s)]);
          }
        } else if (pass == Pass::W && timing.end[idx(s)][kB][idx(i)] < 0) {
          break;
        }
        const Time cost = of_pass(pass, costs.f[idx(s)], costs.b[idx(s)], costs.w[idx(s)]);
        if (next[idx(s)] == 0) first_start[idx(s)] = ready;
        clock[idx(s)] = ready + cost;
        timing.end[idx(s)][idx(split_index(pass))][idx(i)] = clock[idx(s)];
        ++next[idx(s)];
        ++progressed;
      }
    }
    if (progressed == 0) throw ScheduleError("solver: the order deadlocks under list scheduling");
    remaining -= progressed;
  }
  timing.stage_span.assign(idx(p), 0);
  for (int s = 0; s < p; ++s) {
    timing.stage_span[idx(s)] = schedule.devices[idx(s)].empty() ? 0 : clock[idx(s)] - first_start[idx(s)];
    timing.span = std::max(timing.span, timing.stage_span[idx(s)]);
  }
  return timing;
}

}  // namespace

ListTiming list_timing(const Problem& problem, const Schedule& schedule) {
  Costs<double> costs{problem.t_f, problem.t_b, problem.t_w, {}};
  for (int s = 0; s < problem.stages(); ++s) costs.comm_after.push_back(problem.comm_after(s));
  Timed<double> timed = run_list(problem, costs, schedule);
  return ListTiming{std::move(timed.end), std::move(timed.stage_span), timed.span};
}

Ticks list_span_ticks(const Problem& problem, const StageTicks& ticks, const Schedule& schedule) {
  return run_list(problem, Costs<Ticks>{ticks.f, ticks.b, ticks.w, ticks.comm_after}, schedule).span;
}

std::int64_t timings_of_equal_work(const Problem& problem, std::int64_t timings) {
  constexpr std::int64_t kReferenceActions = 3LL * 16 * 64;
  const std::int64_t actions = std::min<std::int64_t>(timings, std::int64_t{1} << 40) * kReferenceActions;
  return std::max<std::int64_t>(1, actions / (3LL * problem.devices * problem.microbatches));
}

ListSpanTicks list_spans_ticks(const Problem& problem, const StageTicks& ticks, const Schedule& schedule) {
  const Timed<Ticks> timed = run_list(problem, Costs<Ticks>{ticks.f, ticks.b, ticks.w, ticks.comm_after}, schedule);
  ListSpanTicks result;
  result.span = timed.span;
  for (const auto& stage : timed.end) {
    for (std::size_t k = 0; k < kSplitPassCount; ++k) result.end_sum[k] = std::accumulate(stage[k].begin(), stage[k].end(), result.end_sum[k]);
  }
  return result;
}

}  // namespace zb
