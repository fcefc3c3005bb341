// zb-auto across placements (see auto_schedule.h).
#include "sim/core/pass_time.h"
#include "sim/solver/auto_schedule.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "sim/support/error.h"
#include "sim/core/limits.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generators.h"
#include "sim/core/memory.h"
#include "sim/core/validator.h"
#include "sim/solver/detail/greedy_schedule.h"
#include "sim/solver/detail/time_grid.h"
#include "sim/solver/detail/v_controllable.h"
#include "sim/solver/detail/zb_v_greedy.h"

namespace zb {

namespace {

struct Candidate {
  const char* name;
  std::function<Schedule(const Problem&, double limit)> make;
};

// The multi-chunk candidates of a placement, in the order ties are broken.
std::vector<Candidate> candidates_for(Placement placement) {
  if (placement == Placement::vshape) {
    return {
        {"zb-v", [](const Problem& problem, double limit) { return zb_v_greedy(problem, limit).schedule; }},
        {"zb-v-h", [](const Problem& problem, double) { return make_zb_v_handcrafted(problem); }},
        // Below what the ZB-V warm-up needs, down to V-Min's third of it.
        {"v-auto",
         [](const Problem& problem, double limit) {
           Problem at_limit = problem;
           at_limit.mem_limit = MemoryLimit{limit, false};
           return make_v_auto(at_limit);
         }},
    };
  }
  return {
      {"zb-i", [](const Problem& problem, double) { return make_zb_interleaved(problem); }},
      {"1f1b-i", [](const Problem& problem, double) { return make_1f1b_interleaved(problem); }},
  };
}

AutoResult best_multi_chunk(const Problem& problem, std::optional<double> requested) {
  const double limit = requested   ? *requested
                       : problem.memory_limit() ? *problem.memory_limit()
                                                : problem.microbatches * problem.activation_unit();
  const TimeGrid grid(problem);
  std::optional<AutoResult> best;
  Ticks best_span = 0;
  std::vector<std::string> refused;
  for (const Candidate& candidate : candidates_for(problem.placement)) {
    Schedule schedule;
    try {
      schedule = candidate.make(problem, limit);
    } catch (const InputError& e) {
      refused.push_back(e.what());
      continue;
    }
    const Metrics metrics = evaluate(problem, schedule).metrics;
    if (first_over_limit(metrics.peak_memory, limit)) {
      refused.push_back(fmt::format("{}: over the limit", candidate.name));
      continue;
    }
    const double peak = *std::max_element(metrics.peak_memory.begin(), metrics.peak_memory.end());
    // The shorter span on the time grid wins (float noise in the evaluator's sums is no
    // difference); at an equal span the smaller peak (zb-v-h's p M_B beside a zb-v that used
    // more of a generous limit for the same span), then the earlier candidate.
    const Ticks span = grid.ticks(metrics.span);
    if (!best || span < best_span || (span == best_span && peak < best->peak_memory)) {
      best = AutoResult{std::move(schedule), metrics.span, limit, peak, candidate.name};
      best_span = span;
    }
  }
  if (!best) {
    throw ScheduleError(fmt::format("zb-auto: no {} schedule fits the memory limit {:g} ({})",
                                    placement_name(problem.placement), limit, fmt::join(refused, "; ")));
  }
  best->schedule.name = "zb-auto";
  return *std::move(best);
}

}  // namespace

AutoResult auto_schedule(const Problem& problem, std::optional<double> memory_limit) {
  if (!problem.t_a2a.empty()) return auto_schedule(with_all_to_all_in_compute(problem), memory_limit);
  check_solver_work(problem, 1, "zb-auto");
  if (problem.chunks == 1) {
    GreedyResult greedy = greedy_schedule(problem, memory_limit);
    const std::vector<double> peaks = peak_memory_by_order(problem, greedy.schedule);
    const double peak = *std::max_element(peaks.begin(), peaks.end());
    return AutoResult{std::move(greedy.schedule), greedy.span, greedy.memory_limit, peak, "greedy"};
  }
  return best_multi_chunk(problem, memory_limit);
}

}  // namespace zb
