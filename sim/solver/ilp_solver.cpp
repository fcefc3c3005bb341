// solve_ilp: zb-auto first, then the lower bound, then CBC on the full or decomposed model.
#include "sim/core/pass_time.h"
#include "sim/solver/ilp_solver.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "sim/support/error.h"
#include "sim/core/memory.h"
#include "sim/core/validator.h"
#include "sim/solver/auto_schedule.h"
#include "sim/solver/detail/capped_1f1b.h"
#include "sim/solver/detail/greedy_schedule.h"
#include "sim/solver/detail/ilp_model.h"
#include "sim/solver/detail/ilp_order_search.h"
#include "sim/solver/detail/list_timing.h"
#include "sim/solver/detail/lower_bound.h"
#include "sim/solver/detail/order_local_search.h"
#include "sim/solver/detail/split_pass.h"

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
      if (action.pass == Pass::BW || split_index(action.pass) != done) return false;
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

// What the steps of one solve share: the problem and the caller's options, the memory limit and
// the bounds, the best order so far (`reference`, the next model's warm start) and the result.
struct Solve {
  Solve(const Problem& problem_, const IlpOptions& options_, Clock::time_point start_)
      : problem(problem_), options(options_), start(start_) {}

  const Problem& problem;
  const IlpOptions& options;
  Clock::time_point start;
  double limit = 0;
  double lower = 0;           // over all schedules
  double in_order_lower = 0;  // over in-order schedules (the search's and the MILP's scope)
  double step = 0;            // the costs' grid, when only strictly shorter spans are searched
  Schedule reference;
  IlpResult result;
};

// The limit below what one microbatch in flight per stage needs: the result that says so, else nullopt.
std::optional<IlpResult> refuse_infeasible_limit(const Problem& problem, const std::optional<double>& requested,
                                                 Clock::time_point start) {
  const double needed = minimum_memory(problem);
  if (!requested || *requested + 1e-9 >= needed) return std::nullopt;
  IlpResult result;
  result.memory_limit = *requested;
  result.message = fmt::format(
      "memory limit {} is infeasible: one microbatch in flight per stage already needs {} (raise --mem-limit "
      "to at least {})",
      *requested, needed, needed);
  result.solve_seconds = seconds_since(start);
  return result;
}

// A caller's schedule (e.g. the optimum at a smaller limit) replaces zb-auto as the warm start
// when it is valid here and strictly shorter.
void take_callers_warm_start(Solve& solve) {
  const std::optional<Schedule>& warm_start = solve.options.warm_start;
  if (!warm_start) return;
  try {
    const ListTiming timing = list_timing(solve.problem, *warm_start);
    const bool fits = !first_over_limit(peak_memory_by_order(solve.problem, *warm_start), solve.limit);
    if (fits && order_is_complete(solve.problem, *warm_start) && timing.span < solve.result.span) {
      solve.reference = *warm_start;
      solve.result.span = timing.span;
    }
  } catch (const InputError&) {
    // Not a schedule of this problem: zb-auto stands.
  }
}

// Which start the best order so far came from (it names who met the bound).
enum class StartFrom { zb_auto, capped_1f1b, local_search };

// The memory-capped 1F1B orders (capped_1f1b.h) where one is strictly shorter: where memory is
// tight they beat zb-auto's rounds, and the search and CBC start from the better order. Then moves
// of short blocks of actions within each device's order (order_local_search.h), from the best
// start and from the capped order too when that is another one: the descents end in different
// places, and the capped order's often lower although it starts longer (1.5B costs, p=8 m=32
// 1.5p: from zb-auto 0.14% above the bound, from the capped order on it). Neither is searched
// where the start already meets the bound, and once one meets it, nothing can be strictly
// shorter, so the other is not run.
StartFrom improve_start(Solve& solve) {
  IlpResult& result = solve.result;
  StartFrom from = StartFrom::zb_auto;
  bool capped_won = false;
  std::optional<Capped1f1bResult> capped;
  if (!close_enough(result.span, solve.lower)) {
    capped = best_capped_1f1b(solve.problem, solve.limit);
    if (capped && capped->span < result.span && !close_enough(capped->span, result.span)) {
      solve.reference = capped->schedule;
      result.span = capped->span;
      capped_won = true;
      from = StartFrom::capped_1f1b;
    }
  }
  if (solve.options.local_search_evaluations > 0 && !close_enough(result.span, solve.lower)) {
    std::vector<Schedule> starts{solve.reference};
    if (capped && !capped_won) starts.push_back(capped->schedule);
    for (const Schedule& origin : starts) {
      if (close_enough(result.span, solve.lower)) break;
      const LocalSearchResult local =
          improve_order_locally(solve.problem, origin, solve.limit, solve.options.local_search_evaluations);
      if (local.span < result.span && !close_enough(local.span, result.span)) {
        solve.reference = local.schedule;
        result.span = local.span;
        from = StartFrom::local_search;
      }
    }
  }
  return from;
}

// The result with its gap, status and proof settled, and the time taken.
IlpResult finished(Solve& solve) {
  IlpResult& result = solve.result;
  result.gap = result.span > 0 ? (result.span - result.best_bound) / result.span : 0.0;
  if (close_enough(result.span, result.best_bound)) {
    result.status = IlpStatus::optimal;
    result.best_bound = result.span;
    result.gap = 0;
    // The bound certifies on its own whenever it is met, whoever found the schedule.
    if (close_enough(result.span, solve.lower)) result.proof = IlpProof::lower_bound;
  }
  if (result.status != IlpStatus::optimal) result.proof = IlpProof::none;
  result.solve_seconds = seconds_since(solve.start);
  return result;
}

// The exact search (it needs no CBC): finished, it proves the best order optimal over in-order
// schedules (returns true); cut short, its best order becomes CBC's warm start. Its root bound
// holds over in-order schedules (the scope of the MILP too).
bool search_orders(Solve& solve) {
  IlpResult& result = solve.result;
  OrderSearchOptions search;
  search.memory_limit = solve.limit;
  search.step = solve.step;
  search.lower_bound = solve.lower;
  search.node_limit = solve.options.search_node_limit;
  search.work_limit = solve.options.search_work_limit;
  search.time_limit_s = solve.options.time_limit_s;
  const OrderSearchResult found = search_in_order_schedules(solve.problem, result.span, search);
  result.search_nodes = found.nodes;
  if (found.better && !first_over_limit(peak_memory_by_order(solve.problem, *found.better), solve.limit)) {
    solve.reference = *found.better;
    result.schedule = *found.better;
    result.span = found.span;
  }
  solve.in_order_lower = std::max(solve.lower, found.root_bound);
  if (found.complete || close_enough(result.span, solve.in_order_lower)) {
    result.best_bound = result.span;
    result.proof = IlpProof::search;
    result.message = fmt::format("branch and bound over in-order schedules finished in {} nodes", found.nodes);
    return true;
  }
  result.best_bound = std::min(solve.in_order_lower, result.span);
  result.stopped_by_wall_clock = found.stopped_by_wall_clock;
  return false;
}

// One round's model around the best order so far: the full model, or with `decompose` the first
// and last actions of every stage free within the order-variable budget. The time windows fix
// most pairs of a decomposed model, so its free blocks grow while the variables stay well inside
// the budget (building a model takes milliseconds). `model_options` receives the options built with.
IlpModel round_model(const Solve& solve, bool decompose, std::size_t budget, IlpModelOptions& model_options) {
  const int largest_block = 3 * solve.problem.microbatches / 2;
  model_options = IlpModelOptions{};
  model_options.memory_limit = solve.limit;
  model_options.incumbent_span = solve.result.span;
  model_options.search_span = solve.step > 0 ? solve.result.span - solve.step : 0.0;
  model_options.lower_bound = solve.in_order_lower;
  if (decompose) {
    model_options.free_head = model_options.free_tail = decomposition_block(solve.problem, budget);
  }
  IlpModel model = build_ilp_model(solve.problem, solve.reference, model_options);
  while (model.decomposed && !model.empty_windows && model.order_pairs < budget / 3 &&
         model_options.free_head < largest_block) {
    IlpModelOptions grown = model_options;
    grown.free_head = grown.free_tail = std::min(largest_block, grown.free_head * 3 / 2 + 1);
    IlpModel bigger = build_ilp_model(solve.problem, solve.reference, grown);
    if (bigger.order_pairs > budget) break;
    model_options = grown;
    model = std::move(bigger);
  }
  return model;
}

// CBC's order read back: taken as the best order when it fits the limit and is strictly shorter.
// Returns whether it was.
bool take_mip_order(Solve& solve, const IlpModel& model, const MipOutcome& outcome) {
  if (outcome.values.empty()) return false;
  IlpResult& result = solve.result;
  Schedule order = ilp_solution_order(model, outcome.values);
  try {
    const ListTiming timing = list_timing(solve.problem, order);
    const bool fits = !first_over_limit(peak_memory_by_order(solve.problem, order), solve.limit);
    if (fits && timing.span < result.span && !close_enough(timing.span, result.span)) {
      order.name = "zb-ilp";
      solve.reference = order;
      result.schedule = std::move(order);
      result.span = timing.span;
      return true;
    }
  } catch (const ScheduleError&) {
    // A degenerate tie order that deadlocks: keep the warm start.
  }
  return false;
}

// What a finished or stopped CBC run on the full model proves: the bound and the proof, and why
// it stopped.
void record_full_model_outcome(Solve& solve, const MipOutcome& outcome) {
  IlpResult& result = solve.result;
  const double step = solve.step;
  auto on_grid = [&](double value) { return step > 0 ? std::ceil(value / step - 1e-6) * step : value; };
  // Nothing one step shorter exists (only when CBC finished: a stopped one proves nothing).
  const bool no_better = step > 0 && outcome.proven_infeasible && !outcome.stopped_on_time && !outcome.crashed;
  if (outcome.proven_optimal || no_better) {
    result.best_bound = result.span;
    result.proof = IlpProof::milp;
  } else {
    result.best_bound =
        std::clamp(on_grid(outcome.best_bound), std::min(solve.in_order_lower, result.span), result.span);
  }
  if (outcome.crashed) {
    result.message = "CBC stopped abnormally; the best schedule so far stands";
  } else if (outcome.stopped_on_time && !outcome.proven_optimal) {
    result.message = wall_clock_message(solve.options, "during the search");
  } else if (outcome.stopped_on_nodes && !outcome.proven_optimal) {
    result.message = fmt::format("node budget of {} reached", solve.options.node_limit);
  }
}

// One CBC run on the round's model within the time and nodes left; false when no time is left to
// start it (the result says so). `improved`: CBC's order became the best one.
bool run_mip(Solve& solve, const IlpModel& model, MipOutcome& outcome, bool& improved) {
  IlpResult& result = solve.result;
  const IlpOptions& options = solve.options;
  const double remaining = options.time_limit_s - seconds_since(solve.start);
  if (remaining <= 0) {
    result.stopped_by_wall_clock = true;
    result.message = wall_clock_message(options, "before the solver started");
    return false;
  }
  result.solver_called = true;
  MipSettings settings;
  settings.node_limit = options.node_limit - result.nodes;
  settings.time_limit_s = remaining;
  settings.threads = options.threads;
  settings.lp_file = options.lp_file;
  settings.isolate = options.isolate;
  settings.objective_step = solve.step;
  settings.use_warm_start = solve.step <= 0;  // the warm start lies outside a strict-improvement search
  outcome = solve_mip(model, settings);
  result.nodes += outcome.nodes;
  result.stopped_by_nodes = result.stopped_by_nodes || outcome.stopped_on_nodes || result.nodes >= options.node_limit;
  result.stopped_by_wall_clock = result.stopped_by_wall_clock || outcome.stopped_on_time;
  improved = take_mip_order(solve, model, outcome);
  if (!model.decomposed) record_full_model_outcome(solve, outcome);
  return true;
}

// CBC on the full model (one solve) or, when that has too many order pairs, as a large-
// neighbourhood search: each round frees the first and last actions of every stage within an
// order-variable budget; an improvement becomes the next reference, no improvement doubles the
// budget, until the time is spent or the blocks cover everything (which is the full model).
void solve_with_mip(Solve& solve) {
  IlpResult& result = solve.result;
  const IlpOptions& options = solve.options;
  const double m = solve.problem.microbatches;
  const double full_pairs = solve.problem.devices * 3.0 * m * (m - 1) / 2.0;
  const bool decompose = full_pairs > static_cast<double>(options.max_full_pairs);
  const int largest_block = 3 * solve.problem.microbatches / 2;
  std::size_t budget = options.decomposed_pairs;
  int rounds = 0;
  int widest_block = 0;
  for (;;) {
    IlpModelOptions model_options;
    const IlpModel model = round_model(solve, decompose, budget, model_options);
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
    } else if (!run_mip(solve, model, outcome, improved)) {
      break;
    }
    if (!model.decomposed) break;
    if (close_enough(result.span, solve.in_order_lower)) break;
    if (result.stopped_by_nodes || outcome.stopped_on_time) break;
    if (options.time_limit_s - seconds_since(solve.start) < 0.2) {
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
}

}  // namespace

IlpResult solve_ilp(const Problem& problem, const IlpOptions& options) {
  if (!problem.t_a2a.empty()) return solve_ilp(with_all_to_all_in_compute(problem), options);
  const auto start = Clock::now();
  if (problem.chunks != 1) return solve_chunked(problem, options, start);
  const std::optional<double> requested = options.memory_limit ? options.memory_limit : problem.memory_limit();
  if (std::optional<IlpResult> refused = refuse_infeasible_limit(problem, requested, start)) return std::move(*refused);
  Solve solve(problem, options, start);
  IlpResult& result = solve.result;
  // zb-auto fits every limit from the minimum memory up (its split-1F1B fallback, section 5).
  solve.limit = greedy_memory_limit(problem, requested);
  GreedyResult greedy = greedy_schedule(problem, solve.limit);
  solve.reference = std::move(greedy.schedule);
  result.heuristic_span = greedy.span;
  result.memory_limit = solve.limit;
  result.span = result.heuristic_span;
  take_callers_warm_start(solve);
  // The closed-form bounds, then the single-stage program over pass counts (lower_bound.h).
  solve.lower = std::max(span_lower_bound(problem, solve.limit).span, sequence_lower_bound(problem, solve.limit));
  const StartFrom from = improve_start(solve);
  result.schedule = solve.reference;
  result.schedule.name = "zb-ilp";
  result.status = IlpStatus::feasible;
  result.best_bound = std::min(solve.lower, result.span);
  if (close_enough(result.span, solve.lower)) {
    result.message = from == StartFrom::local_search  ? "a locally improved order meets the lower bound"
                     : from == StartFrom::capped_1f1b ? "a memory-capped 1F1B order meets the lower bound"
                                                      : "zb-auto meets the lower bound";
    return finished(solve);
  }
  // With costs on a grid every span is on it too: search only for spans at least one step
  // shorter (tighter windows), and round the bound up to the grid.
  solve.step = options.strict_improvement ? time_granularity(problem) : 0.0;
  solve.in_order_lower = solve.lower;
  if (options.search_node_limit > 0 && search_orders(solve)) return finished(solve);
  if (!ilp_available()) {
    result.message = "built without COIN-OR CBC (Debian: coinor-libcbc-dev): zb-auto and its lower bound only";
    return finished(solve);
  }
  solve_with_mip(solve);
  return finished(solve);
}

}  // namespace zb
