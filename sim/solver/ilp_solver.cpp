// solve_ilp: zb-auto first, then the lower bound, then CBC on the full or decomposed model.
#include "sim/solver/ilp_solver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "sim/support/error.h"
#include "sim/core/memory.h"
#include "sim/core/validator.h"
#include "sim/solver/auto_schedule.h"
#include "sim/solver/capped_1f1b.h"
#include "sim/solver/greedy_schedule.h"
#include "sim/solver/ilp_model.h"
#include "sim/solver/ilp_order_search.h"
#include "sim/solver/list_timing.h"
#include "sim/solver/lower_bound.h"
#include "sim/solver/order_local_search.h"

namespace zb {

std::string_view ilp_status_name(IlpStatus status) {
  switch (status) {
    case IlpStatus::optimal: return "optimal";
    case IlpStatus::feasible: return "feasible";
    case IlpStatus::infeasible: return "infeasible";
  }
  return "unknown";
}

std::string_view ilp_proof_name(IlpProof proof) {
  switch (proof) {
    case IlpProof::none: return "none";
    case IlpProof::lower_bound: return "lower-bound";
    case IlpProof::time_windows: return "time-windows";
    case IlpProof::milp: return "milp";
    case IlpProof::search: return "search";
  }
  return "unknown";
}

std::string_view ilp_proof_text(IlpProof proof) {
  switch (proof) {
    case IlpProof::none: return "not proven optimal";
    case IlpProof::lower_bound: return "proven optimal by the lower bound (over all schedules)";
    case IlpProof::time_windows:
      return "proven optimal by the time windows: no span one grid step shorter fits (over all in-order schedules)";
    case IlpProof::milp:
      return "proven optimal by the MILP (CBC), over schedules that keep microbatch order within F, B and W per device";
    case IlpProof::search:
      return "proven optimal by exhaustive branch and bound, over schedules that keep microbatch order within F, B "
             "and W per device";
  }
  return "unknown";
}

Schedule require_schedule(const IlpResult& result) {
  if (result.status == IlpStatus::infeasible) throw ScheduleError("zb-ilp: " + result.message);
  return result.schedule;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The safety net fired: say so, since only then can the result depend on the machine.
std::string wall_clock_message(const IlpOptions& options, std::string_view when) {
  return fmt::format("wall-clock safety net of {} s fired{}{} (before the node budget of {}): the result may differ "
                     "between runs",
                     options.time_limit_s, when.empty() ? "" : " ", when, options.node_limit);
}

bool close_enough(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)); }

// The largest of a few round steps that every cost and transfer time is a multiple of (0: none):
// list-scheduled times are sums of them, so every span is a multiple too.
double time_granularity(const Problem& problem) {
  std::vector<double> values;
  for (const auto* costs : {&problem.t_f, &problem.t_b, &problem.t_w}) values.insert(values.end(), costs->begin(), costs->end());
  for (int s = 0; s + 1 < problem.stages(); ++s) values.push_back(problem.comm_after(s));
  for (double step : {1.0, 0.5, 0.25, 0.125, 0.1, 0.05, 0.01, 0.001}) {
    const bool all = std::all_of(values.begin(), values.end(), [&](double v) {
      const double units = v / step;
      return std::abs(units - std::round(units)) <= 1e-9 * std::max(1.0, std::abs(units));
    });
    if (all) return step;
  }
  return 0.0;
}

// Every (stage, microbatch) has exactly one F, B and W, in that order, on its own stage: what the
// model's layout needs from a warm start (list_timing alone accepts repeats).
bool order_is_complete(const Problem& problem, const Schedule& schedule) {
  const auto m = static_cast<std::size_t>(problem.microbatches);
  for (const auto& list : schedule.devices) {
    if (list.size() != 3 * m) return false;
    std::vector<int> seen(m, 0);  // passes done per microbatch: F = 1, B = 2, W = 3
    for (const Action& action : list) {
      if (action.chunk != 0 || action.microbatch < 0 || static_cast<std::size_t>(action.microbatch) >= m) return false;
      int& done = seen[static_cast<std::size_t>(action.microbatch)];
      const int expected = action.pass == Pass::F ? 0 : action.pass == Pass::B ? 1 : action.pass == Pass::W ? 2 : -1;
      if (expected != done) return false;
      ++done;
    }
  }
  return true;
}

// The least memory any schedule needs: one microbatch in flight on each stage.
double minimum_memory(const Problem& problem) {
  double needed = 0;
  for (int s = 0; s < problem.stages(); ++s) {
    const auto si = static_cast<std::size_t>(s);
    needed = std::max({needed, problem.mem_f[si], problem.mem_f[si] + problem.mem_b[si]});
  }
  return needed;
}

// Free actions per stage for the decomposed model within an order-variable budget: a block of
// K actions has about K^2 / 6 variable pairs (three pass types, K/3 each).
int decomposition_block(const Problem& problem, std::size_t budget) {
  const double per_block = static_cast<double>(budget) / (2.0 * problem.devices);
  const int k = static_cast<int>(std::sqrt(6.0 * per_block));
  return std::clamp(k, 3, 3 * problem.microbatches / 2);
}

// Several chunks per device: zb-auto at the placement with the lower bound over every order
// (chunked_lower_bound); the order search and the model are per stage, hence one chunk per device.
IlpResult solve_chunked(const Problem& problem, const IlpOptions& options, Clock::time_point start) {
  if (problem.placement == Placement::bidirectional) require_one_chunk_per_device(problem);
  IlpResult result;
  const std::optional<double> requested = options.memory_limit ? options.memory_limit : problem.memory_limit();
  try {
    AutoResult heuristic = auto_schedule(problem, requested);
    result.schedule = std::move(heuristic.schedule);
    result.schedule.name = "zb-ilp";
    result.span = result.heuristic_span = heuristic.span;
    result.memory_limit = heuristic.memory_limit;
  } catch (const ScheduleError& error) {
    result.memory_limit = requested.value_or(0);
    result.message = error.what();
    result.solve_seconds = seconds_since(start);
    return result;
  }
  const double bound = chunked_lower_bound(problem, requested ? *requested : -1.0);
  result.best_bound = std::min(bound, result.span);
  result.gap = result.span > 0 ? (result.span - result.best_bound) / result.span : 0.0;
  result.status = IlpStatus::feasible;
  if (close_enough(result.span, bound)) {
    result.status = IlpStatus::optimal;
    result.proof = IlpProof::lower_bound;
    result.best_bound = result.span;
    result.gap = 0;
  }
  result.message = fmt::format(
      "{} chunks per device: zb-auto at the {} placement and the multi-chunk lower bound (work plus head and tail "
      "idle per device); the order search and the MILP take one chunk per device",
      problem.chunks, placement_name(problem.placement));
  result.solve_seconds = seconds_since(start);
  return result;
}

}  // namespace

IlpResult solve_ilp(const Problem& problem, const IlpOptions& options) {
  const auto start = Clock::now();
  if (problem.chunks != 1) return solve_chunked(problem, options, start);
  IlpResult result;
  const std::optional<double> requested = options.memory_limit ? options.memory_limit : problem.memory_limit();
  const double needed = minimum_memory(problem);
  if (requested && *requested + 1e-9 < needed) {
    result.memory_limit = *requested;
    result.message = fmt::format(
        "memory limit {} is infeasible: one microbatch in flight per stage already needs {} (raise --mem-limit "
        "to at least {})",
        *requested, needed, needed);
    result.solve_seconds = seconds_since(start);
    return result;
  }
  // zb-auto fits every limit from `needed` up (its split-1F1B fallback, section 5).
  const double limit = greedy_memory_limit(problem, requested);
  GreedyResult greedy = greedy_schedule(problem, limit);
  Schedule reference = std::move(greedy.schedule);
  result.heuristic_span = greedy.span;
  result.memory_limit = limit;
  result.span = result.heuristic_span;
  // A caller's schedule (e.g. the optimum at a smaller limit) replaces zb-auto as the warm start
  // when it is valid here and strictly shorter.
  if (options.warm_start) {
    try {
      const ListTiming timing = list_timing(problem, *options.warm_start);
      const bool fits = !first_over_limit(peak_memory_by_order(problem, *options.warm_start), limit);
      if (fits && order_is_complete(problem, *options.warm_start) && timing.span < result.span) {
        reference = *options.warm_start;
        result.span = timing.span;
      }
    } catch (const InputError&) {
      // Not a schedule of this problem: zb-auto stands.
    }
  }
  // The closed-form bounds, then the single-stage program over pass counts (lower_bound.h).
  const double lower = std::max(span_lower_bound(problem, limit).span, sequence_lower_bound(problem, limit));
  // The memory-capped 1F1B orders (capped_1f1b.h) where one is strictly shorter: where memory
  // is tight they beat zb-auto's rounds, and the search and CBC start from the better order.
  // Not searched where the start already meets the bound: nothing can be shorter there.
  bool capped_won = false;
  std::optional<Capped1f1bResult> capped;
  if (!close_enough(result.span, lower)) {
    capped = best_capped_1f1b(problem, limit);
    if (capped && capped->span < result.span && !close_enough(capped->span, result.span)) {
      reference = capped->schedule;
      result.span = capped->span;
      capped_won = true;
    }
  }
  // Then moves of short blocks of actions within each device's order (order_local_search.h), from
  // the best start and from the capped order too when that is another one: the descents end in
  // different places, and the capped order's often lower although it starts longer (1.5B costs,
  // p=8 m=32 1.5p: from zb-auto 0.14% above the bound, from the capped order on it). Once one
  // meets the bound, nothing can be strictly shorter, so the other is not run.
  bool local_won = false;
  if (options.local_search_evaluations > 0 && !close_enough(result.span, lower)) {
    std::vector<Schedule> starts{reference};
    if (capped && !capped_won) starts.push_back(capped->schedule);
    for (const Schedule& origin : starts) {
      if (close_enough(result.span, lower)) break;
      const LocalSearchResult local = improve_order_locally(problem, origin, limit, options.local_search_evaluations);
      if (local.span < result.span && !close_enough(local.span, result.span)) {
        reference = local.schedule;
        result.span = local.span;
        local_won = true;
      }
    }
  }
  result.schedule = reference;
  result.schedule.name = "zb-ilp";
  result.status = IlpStatus::feasible;

  result.best_bound = std::min(lower, result.span);
  auto finish = [&]() {
    result.gap = result.span > 0 ? (result.span - result.best_bound) / result.span : 0.0;
    if (close_enough(result.span, result.best_bound)) {
      result.status = IlpStatus::optimal;
      result.best_bound = result.span;
      result.gap = 0;
      // The bound certifies on its own whenever it is met, whoever found the schedule.
      if (close_enough(result.span, lower)) result.proof = IlpProof::lower_bound;
    }
    if (result.status != IlpStatus::optimal) result.proof = IlpProof::none;
    result.solve_seconds = seconds_since(start);
    return result;
  };
  if (close_enough(result.span, lower)) {
    result.message = local_won    ? "a locally improved order meets the lower bound"
                     : capped_won ? "a memory-capped 1F1B order meets the lower bound"
                                  : "zb-auto meets the lower bound";
    return finish();
  }
  // With costs on a grid every span is on it too: search only for spans at least one step
  // shorter (tighter windows), and round the bound up to the grid.
  const double step = options.strict_improvement ? time_granularity(problem) : 0.0;
  // The exact search first (it needs no CBC): finished, it proves the best order optimal over
  // in-order schedules; cut short, its best order becomes CBC's warm start.
  // The search's root bound holds over in-order schedules (the scope of the MILP too).
  double in_order_lower = lower;
  if (options.search_node_limit > 0) {
    OrderSearchOptions search;
    search.memory_limit = limit;
    search.step = step;
    search.lower_bound = lower;
    search.node_limit = options.search_node_limit;
    search.work_limit = options.search_work_limit;
    search.time_limit_s = options.time_limit_s;
    const OrderSearchResult found = search_in_order_schedules(problem, result.span, search);
    result.search_nodes = found.nodes;
    if (found.better && !first_over_limit(peak_memory_by_order(problem, *found.better), limit)) {
      reference = *found.better;
      result.schedule = *found.better;
      result.span = found.span;
    }
    in_order_lower = std::max(lower, found.root_bound);
    if (found.complete || close_enough(result.span, in_order_lower)) {
      result.best_bound = result.span;
      result.proof = IlpProof::search;
      result.message = fmt::format("branch and bound over in-order schedules finished in {} nodes", found.nodes);
      return finish();
    }
    result.best_bound = std::min(in_order_lower, result.span);
    result.stopped_by_wall_clock = found.stopped_by_wall_clock;
  }
  if (!ilp_available()) {
    result.message = "built without COIN-OR CBC (Debian: coinor-libcbc-dev): zb-auto and its lower bound only";
    return finish();
  }

  auto on_grid = [&](double value) { return step > 0 ? std::ceil(value / step - 1e-6) * step : value; };
  const double m = problem.microbatches;
  const double full_pairs = problem.devices * 3.0 * m * (m - 1) / 2.0;
  const bool decompose = full_pairs > static_cast<double>(options.max_full_pairs);
  const int largest_block = 3 * problem.microbatches / 2;
  std::size_t budget = options.decomposed_pairs;
  int rounds = 0;
  int widest_block = 0;
  // Full model: one solve. Decomposed: a large-neighbourhood search. Each round frees the first
  // and last actions of every stage within an order-variable budget; an improvement becomes the
  // next reference, no improvement doubles the budget, until the time is spent or the blocks
  // cover everything (which is the full model).
  for (;;) {
    IlpModelOptions model_options;
    model_options.memory_limit = limit;
    model_options.incumbent_span = result.span;
    model_options.search_span = step > 0 ? result.span - step : 0.0;
    model_options.lower_bound = in_order_lower;
    if (decompose) {
      model_options.free_head = model_options.free_tail = decomposition_block(problem, budget);
    }
    IlpModel model = build_ilp_model(problem, reference, model_options);
    // The time windows fix most pairs of a decomposed model: grow the free blocks while the
    // variables stay well inside the budget (building a model takes milliseconds).
    while (model.decomposed && !model.empty_windows && model.order_pairs < budget / 3 &&
           model_options.free_head < largest_block) {
      IlpModelOptions grown = model_options;
      grown.free_head = grown.free_tail = std::min(largest_block, grown.free_head * 3 / 2 + 1);
      IlpModel bigger = build_ilp_model(problem, reference, grown);
      if (bigger.order_pairs > budget) break;
      model_options = grown;
      model = std::move(bigger);
    }
    ++rounds;
    widest_block = std::max(widest_block, model_options.free_head);
    result.decomposed = model.decomposed;
    result.order_variables = std::max(result.order_variables, model.order_pairs);
    result.rows = std::max(result.rows, model.lp.rows.size());
    bool improved = false;
    MipOutcome outcome;
    if (model.empty_windows) {
      // The time windows alone rule out any span one step shorter.
      if (!model.decomposed) {
        result.best_bound = result.span;
        result.proof = IlpProof::time_windows;
        result.message = "time windows rule out any shorter span";
      }
    } else {
      const double remaining = options.time_limit_s - seconds_since(start);
      if (remaining <= 0) {
        result.stopped_by_wall_clock = true;
        result.message = wall_clock_message(options, "before the solver started");
        break;
      }
      result.solver_called = true;
      MipSettings settings;
      settings.node_limit = options.node_limit - result.nodes;
      settings.time_limit_s = remaining;
      settings.threads = options.threads;
      settings.lp_file = options.lp_file;
      settings.isolate = options.isolate;
      settings.objective_step = step;
      settings.use_warm_start = step <= 0;  // the warm start lies outside a strict-improvement search
      outcome = solve_mip(model, settings);
      result.nodes += outcome.nodes;
      result.stopped_by_nodes = result.stopped_by_nodes || outcome.stopped_on_nodes || result.nodes >= options.node_limit;
      result.stopped_by_wall_clock = result.stopped_by_wall_clock || outcome.stopped_on_time;
      if (!outcome.values.empty()) {
        Schedule order = ilp_solution_order(model, outcome.values);
        try {
          const ListTiming timing = list_timing(problem, order);
          const bool fits = !first_over_limit(peak_memory_by_order(problem, order), limit);
          if (fits && timing.span < result.span && !close_enough(timing.span, result.span)) {
            order.name = "zb-ilp";
            reference = order;
            result.schedule = std::move(order);
            result.span = timing.span;
            improved = true;
          }
        } catch (const ScheduleError&) {
          // A degenerate tie order that deadlocks: keep the warm start.
        }
      }
      if (!model.decomposed) {
        // Nothing one step shorter exists (only when CBC finished: a stopped one proves nothing).
        const bool no_better = step > 0 && outcome.proven_infeasible && !outcome.stopped_on_time && !outcome.crashed;
        if (outcome.proven_optimal || no_better) {
          result.best_bound = result.span;
          result.proof = IlpProof::milp;
        } else {
          result.best_bound = std::clamp(on_grid(outcome.best_bound), std::min(in_order_lower, result.span), result.span);
        }
        if (outcome.crashed) {
          result.message = "CBC stopped abnormally; the best schedule so far stands";
        } else if (outcome.stopped_on_time && !outcome.proven_optimal) {
          result.message = wall_clock_message(options, "during the search");
        } else if (outcome.stopped_on_nodes && !outcome.proven_optimal) {
          result.message = fmt::format("node budget of {} reached", options.node_limit);
        }
      }
    }
    if (!model.decomposed) break;
    if (close_enough(result.span, in_order_lower)) break;
    if (result.stopped_by_nodes || outcome.stopped_on_time) break;
    if (options.time_limit_s - seconds_since(start) < 0.2) {
      result.stopped_by_wall_clock = true;
      break;
    }
    if (!improved) {
      if (model_options.free_head >= largest_block) break;
      budget *= 2;
    }
  }
  if (result.decomposed) {
    result.message = fmt::format(
        "decomposed: {} rounds reordering up to the first and last {} actions of each stage around the best order "
        "so far; bound from the lower bound{}",
        rounds, widest_block,
        result.stopped_by_wall_clock ? "; " + wall_clock_message(options, "")
        : result.stopped_by_nodes    ? fmt::format("; node budget of {} reached", options.node_limit)
                                     : std::string());
  }
  return finish();
}

}  // namespace zb
