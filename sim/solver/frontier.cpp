// Sweeps the memory limit for zb-auto (and zb-ilp): where extra memory stops buying bubble.
#include "sim/solver/frontier.h"

#include <cmath>

#include <fmt/format.h>

#include "sim/support/error.h"
#include "sim/core/limits.h"
#include "sim/core/pass_time.h"
#include "sim/solver/auto_schedule.h"

namespace zb {

std::vector<FrontierPoint> memory_frontier(const Problem& problem, const FrontierOptions& options) {
  // The planners' problem (pass_time.h): its work counts the all-to-all no pair hides here.
  if (!problem.t_a2a.empty()) return memory_frontier(with_all_to_all_in_compute(problem), options);
  if (!(options.step_times_p > 0) || options.to_times_p < options.from_times_p) {
    throw InputError("frontier: need step > 0 and to >= from");
  }
  const double unit = problem.devices * problem.activation_unit();
  const double work = problem.work();
  std::vector<FrontierPoint> points;
  const double runs = std::floor((options.to_times_p - options.from_times_p) / options.step_times_p + 1e-9) + 1;
  // Before the loop, which takes each run's refusal as infeasible.
  check_solver_work(problem, runs, "frontier (a run per memory limit, --from to --to by --step)");
  const int steps = static_cast<int>(runs) - 1;
  for (int k = 0; k <= steps; ++k) {
    FrontierPoint point;
    point.limit_times_p = options.from_times_p + k * options.step_times_p;
    point.limit = point.limit_times_p * unit;
    point.work = work;
    try {
      const AutoResult best = auto_schedule(problem, point.limit);
      point.auto_span = best.span;
      point.auto_bubble_rate = best.span > 0 ? (best.span - work) / best.span : 0.0;
      point.auto_peak_memory = best.peak_memory;
    } catch (const InputError&) {
      point.auto_feasible = false;
    }
    if (options.with_ilp && problem.chunks == 1) {
      IlpOptions ilp_options;
      ilp_options.memory_limit = point.limit;
      ilp_options.time_limit_s = options.ilp_time_limit_s;
      // What fit the previous (smaller) limit fits this one: the frontier never rises.
      if (!points.empty() && points.back().ilp && points.back().ilp->status != IlpStatus::infeasible) {
        ilp_options.warm_start = points.back().ilp->schedule;
      }
      point.ilp = solve_ilp(problem, ilp_options);
      if (point.ilp->status != IlpStatus::infeasible && point.ilp->span > 0) {
        point.ilp_bubble_rate = (point.ilp->span - work) / point.ilp->span;
      }
    }
    points.push_back(std::move(point));
  }
  return points;
}

std::string FrontierCurve::label() const {
  if (chunks == 1) return "1 chunk per device";
  if (placement == Placement::vshape) return fmt::format("V, {} chunks", chunks);
  return fmt::format("{}, {} chunks", placement_name(placement), chunks);
}

}  // namespace zb
