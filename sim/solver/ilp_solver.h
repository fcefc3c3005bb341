// zb-ilp: the optimal schedule under a memory limit, on COIN-OR CBC, warm-started from zb-auto.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

enum class IlpStatus {
  optimal,     // span proven optimal (span == best bound)
  feasible,    // a schedule, optimality not proven within the time limit (or decomposed)
  infeasible,  // no schedule fits the memory limit
};

std::string_view ilp_status_name(IlpStatus status);

// What proves an `optimal` result (its certificate). The lower bound and the time windows hold
// for every schedule; CBC's proof holds for the schedules its model spans, which keep microbatch
// order within F, B and W on each device.
enum class IlpProof {
  none,          // not proven (status feasible or infeasible)
  lower_bound,   // the span equals span_lower_bound (lower_bound.h)
  time_windows,  // on a time grid, no pass has room for a span one step shorter
  milp,          // CBC proved the model optimal (or infeasible one grid step below the span)
  search,        // the branch and bound over in-order schedules finished (ilp_order_search.h)
};

std::string_view ilp_proof_name(IlpProof proof);  // "none", "lower-bound", "time-windows", "milp", "search"
// One sentence for people: what proved it and over which schedules.
std::string_view ilp_proof_text(IlpProof proof);

struct IlpOptions {
  std::optional<double> memory_limit;  // absolute; default: the problem's limit, else unlimited
  // The search's budget: CBC branch-and-bound nodes over the whole solve. Node counts do not
  // depend on the machine, so one input gives one result (with threads = 1). The wall-clock
  // limit is only a safety net for the work nodes do not bound (a large root LP); when it fires
  // the result says so, and may differ between runs.
  // 200 nodes: the p=4 m=8 limit-10 case proves its optimum (145) in 86 nodes, about 2.5 CPU
  // seconds here; the benchmark's p=4 m=12 1.5p case does about 127 nodes per CPU second.
  std::int64_t node_limit = 200;
  // The exact search's budget (ilp_order_search.h), run before CBC: its nodes (one pass added
  // to a partial schedule; 0: skip the search) and the cells of the programs that bound them
  // (about 100 M per second here). The benchmark's p=4 m=12 1.5p case finishes in 12,183 nodes.
  std::int64_t search_node_limit = 1'000'000;
  std::int64_t search_work_limit = 300'000'000;
  // The local search's budget (order_local_search.h), per start it runs from (the best start, and
  // the capped 1F1B order when that is another), before the exact search: list timings (0: skip
  // it). 100,000 is 1.2-1.7 s at p=16 m=48..64 here and closes most of what zb-auto and the
  // capped 1F1B orders leave at 1.25p-1.5p.
  std::int64_t local_search_evaluations = 100'000;
  double time_limit_s = 60;            // safety net: wall clock for the whole solve
  // Above this many order variables in the full model, decompose: only the first and last
  // actions of each stage are reordered, the middle keeps the zb-auto order.
  std::size_t max_full_pairs = 20000;
  std::size_t decomposed_pairs = 2500;  // order-variable budget of the decomposed model
  int threads = 1;                      // CBC threads (1: deterministic for a given limit)
  std::string lp_file;                  // when set, also write the model there (CPLEX LP form)
  // Solve in a forked child that is killed at the deadline: CBC's own limit counts CPU time and
  // is not checked in every phase, and CBC 2.10 can crash when its limit hits before the root
  // node is done. Off: solve in this process (CBC gets the whole budget, no hard deadline).
  bool isolate = true;
  // When all costs lie on a grid (e.g. integers), search only for spans one grid step shorter
  // than zb-auto's: tighter time windows, and a proof of optimality when none exists.
  bool strict_improvement = true;
  // A known schedule of this problem (v = 1, split B/W) to start from instead of zb-auto when it
  // fits the limit and is shorter, e.g. the optimum at a smaller memory limit.
  std::optional<Schedule> warm_start;
};

struct IlpResult {
  IlpStatus status = IlpStatus::infeasible;
  IlpProof proof = IlpProof::none;  // set exactly when status is optimal
  Schedule schedule;           // empty when infeasible
  double span = 0;             // list-scheduled span of `schedule`
  double best_bound = 0;       // valid lower bound on the optimal span
  double gap = 0;              // (span - best_bound) / span
  double heuristic_span = 0;   // zb-auto's span (the warm start)
  double memory_limit = 0;     // absolute limit used
  double solve_seconds = 0;    // wall clock
  bool decomposed = false;
  bool solver_called = false;  // false when zb-auto already met the lower bound
  std::int64_t nodes = 0;      // CBC's branch-and-bound nodes spent
  std::int64_t search_nodes = 0;       // the order search's nodes spent
  bool stopped_by_nodes = false;       // the node budget ran out (deterministic)
  bool stopped_by_wall_clock = false;  // the safety net fired (the result may vary between runs)
  std::size_t order_variables = 0;
  std::size_t rows = 0;
  std::string message;         // why infeasible, or what limited the solve
};

// Never throws on an infeasible limit (status infeasible, message says why). Several chunks per
// device (interleaved, vshape): zb-auto with chunked_lower_bound (lower_bound.h), a certified gap
// but no search or MILP; throws InputError for the bidirectional placement. Without CBC it returns zb-auto with the lower
// bound (optimal only when they meet) and says so in `message`.
IlpResult solve_ilp(const Problem& problem, const IlpOptions& options);

// The schedule of a result, or InputError with its message when it is infeasible.
Schedule require_schedule(const IlpResult& result);

// Backend: solves `model` with CBC (ilp_mip.cpp, which loads the CBC module ilp_cbc.cpp on first
// use; Error when this build has no CBC or the module cannot be loaded).
struct IlpModel;
struct MipSettings {
  std::int64_t node_limit = 200;
  double time_limit_s = 10;
  double objective_step = 0;  // spans lie on this grid: CBC may prune nodes within one step
  bool use_warm_start = true; // pass the model's warm start (off when it is outside the search)
  int threads = 1;
  std::string lp_file;
  bool isolate = true;
};
struct MipOutcome {
  std::vector<double> values;  // best solution found (column values), or empty
  double best_bound = 0;
  bool proven_optimal = false;
  bool proven_infeasible = false;
  bool stopped_on_time = false;
  bool stopped_on_nodes = false;
  std::int64_t nodes = 0;
  bool crashed = false;  // the isolated solver died (its result is lost, the warm start stands)
};
bool ilp_available();
MipOutcome solve_mip(const IlpModel& model, const MipSettings& settings);

}  // namespace zb
