// List scheduling of a split-pass order: repeatedly run every device as far as its inputs allow.
#include "sim/solver/list_timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "sim/schedule/error.h"

namespace zb {

namespace {
std::size_t idx(int i) { return static_cast<std::size_t>(i); }
int pass_index(Pass pass) {
  switch (pass) {
    case Pass::F: return 0;
    case Pass::B: return 1;
    case Pass::W: return 2;
    default: throw InputError("solver: fused BW actions are not supported; split B and W");
  }
}
}  // namespace

ListTiming list_timing(const Problem& problem, const Schedule& schedule) {
  const int p = problem.devices;
  const int m = problem.microbatches;
  if (problem.chunks != 1 || schedule.device_count() != p) {
    throw InputError(fmt::format("solver: schedule has {} devices, problem {} (chunks {})",
                                 schedule.device_count(), p, problem.chunks));
  }
  constexpr double kNotDone = -1.0;
  ListTiming timing;
  timing.end.assign(idx(p), std::vector<std::vector<double>>(3, std::vector<double>(idx(m), kNotDone)));
  std::vector<std::size_t> next(idx(p), 0);
  std::vector<double> clock(idx(p), 0.0);
  std::vector<double> first_start(idx(p), 0.0);
  std::size_t remaining = schedule.action_count();
  while (remaining > 0) {
    std::size_t progressed = 0;
    for (int s = 0; s < p; ++s) {
      const auto& list = schedule.devices[idx(s)];
      while (next[idx(s)] < list.size()) {
        const Action& action = list[next[idx(s)]];
        const int k = pass_index(action.pass);
        const int i = action.microbatch;
        if (i < 0 || i >= m) throw ScheduleError(fmt::format("solver: microbatch {} out of range", i));
        double ready = clock[idx(s)];
        if (action.pass == Pass::F && s > 0) {
          const double input = timing.end[idx(s - 1)][0][idx(i)];
          if (input < 0) break;
          ready = std::max(ready, input + problem.comm_after(s - 1));
        } else if (action.pass == Pass::B) {
          if (timing.end[idx(s)][0][idx(i)] < 0) break;
          if (s + 1 < p) {
            const double input = timing.end[idx(s + 1)][1][idx(i)];
            if (input < 0) break;
            ready = std::max(ready, input + problem.comm_after(s));
          }
        } else if (action.pass == Pass::W && timing.end[idx(s)][1][idx(i)] < 0) {
          break;
        }
        const double cost = k == 0 ? problem.t_f[idx(s)] : k == 1 ? problem.t_b[idx(s)] : problem.t_w[idx(s)];
        if (next[idx(s)] == 0) first_start[idx(s)] = ready;
        clock[idx(s)] = ready + cost;
        timing.end[idx(s)][idx(k)][idx(i)] = clock[idx(s)];
        ++next[idx(s)];
        ++progressed;
      }
    }
    if (progressed == 0) throw ScheduleError("solver: the order deadlocks under list scheduling");
    remaining -= progressed;
  }
  timing.stage_span.assign(idx(p), 0.0);
  for (int s = 0; s < p; ++s) {
    timing.stage_span[idx(s)] = schedule.devices[idx(s)].empty() ? 0.0 : clock[idx(s)] - first_start[idx(s)];
    timing.span = std::max(timing.span, timing.stage_span[idx(s)]);
  }
  return timing;
}

}  // namespace zb
