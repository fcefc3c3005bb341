// What the official zero-bubble runtime plans on, and the schedule it picks from that plan.
#include "sim/solver/detail/official_runtime.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "sim/support/error.h"
#include "sim/solver/detail/greedy_schedule.h"

namespace zb {

namespace {

// sorted(values)[len // 2], as runtime.py takes it: the upper median.
double upper_median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

void make_uniform(std::vector<double>& per_stage) {
  if (per_stage.empty()) return;
  per_stage.assign(per_stage.size(), upper_median(per_stage));
}

}  // namespace

Problem official_runtime_planning_problem(const Problem& problem) {
  if (problem.chunks != 1) {
    throw InputError(fmt::format("the official runtime's ZB-1p/ZB-2p runs one chunk per device (chunks {})",
                                 problem.chunks));
  }
  Problem planned = problem;
  make_uniform(planned.t_f);
  make_uniform(planned.t_b);
  make_uniform(planned.t_w);
  make_uniform(planned.t_bw);
  if (!planned.t_comm.empty()) {
    const double slowest = *std::max_element(planned.t_comm.begin(), planned.t_comm.end());
    planned.t_comm.assign(planned.t_comm.size(), slowest);
  }
  return planned;
}

Schedule official_runtime_schedule(const Problem& problem, int times_p) {
  const Problem planned = official_runtime_planning_problem(problem);
  const double limit = times_p * problem.devices * problem.activation_unit();
  std::optional<GreedyResult> best;
  for (const GreedySwitches& switches : greedy_variants()) {
    std::optional<GreedyResult> run = greedy_variant(planned, limit, switches);
    if (run && (!best || run->span < best->span)) best = std::move(run);
  }
  if (!best) {
    throw ScheduleError(fmt::format("the official runtime's heuristic finds no schedule under {}p ({:g}): "
                                    "every variant runs out of memory",
                                    times_p, limit));
  }
  Schedule schedule = std::move(best->schedule);
  schedule.name = fmt::format("zb-{}p-official", times_p);
  return schedule;
}

}  // namespace zb
