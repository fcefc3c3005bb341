// zb-ilp's certificates on the 54-case table: the paper's 1.5B costs (18.522 / 18.086 / 9.337 ms,
// t_comm 0.601 ms, memory 2 / -1 / -1 per microbatch as in the reference implementation) at
// p = 4, 8, 16, m = 2p, 3p, 4p and memory limits 1, 1.25, 1.5, 2, 2.5, 3 times p * M_B.
// Per case, "before" is what the closed-form lower bound alone certifies about zb-auto (the state
// before this table existed); "seq-bound" is the single-stage program (sequence_lower_bound), "after" is zb-ilp: status, gap, what proved it (lower-bound, time-windows,
// milp, search), CBC's nodes and wall time. zb-ilp runs its order search (ilp_order_search.h) before
// CBC, under the search budget set here (--search-nodes, --search-work). The node budget decides the result (deterministic); the wall clock
// is only a safety net, and a `!` marks the cases where it fired.
//
//   ./build/bench/zb_bench_certify [--node-limit N] [--time-limit S] [--max-p P] [--only-p P] [--threads T]
//                                  [--only-m M] [--only-limit TIMES_P] [--search-nodes N] [--search-work N] [--small]
//                                  [--search P M TIMES_P] [--local P M TIMES_P] [--window W] [--local-evals N]
// --small: the sweep over every p <= 4, m <= 12 and memory limit instead (sweep_small).
// --search P M TIMES_P: the order search alone on one 1.5B-cost problem of any shape, from zb-auto
// (search_one): which side of a gap is loose where the search can finish (the bound, when the
// optimum it proves is above it; zb-auto, when the optimum meets the bound).
// --local P M TIMES_P: zb-ilp's starts alone on one such problem (local_one): zb-auto, the capped
// 1F1B orders, and the local search from each (--window, --local-evals), against the lower bound.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "sim/core/problem_spec.h"
#include "sim/solver/detail/capped_1f1b.h"
#include "sim/solver/detail/greedy_schedule.h"
#include "sim/solver/detail/ilp_order_search.h"
#include "sim/solver/ilp_solver.h"
#include "sim/solver/detail/lower_bound.h"
#include "sim/solver/detail/order_local_search.h"

namespace {

zb::Problem paper_problem(int p, int m, double limit) {
  zb::ProblemSpec spec;
  spec.devices = p;
  spec.microbatches = m;
  spec.t_f = {18.522};
  spec.t_b = {18.086};
  spec.t_w = {9.337};
  spec.t_comm = {0.601};
  spec.mem_f = {2};
  spec.mem_b = {-1};
  spec.mem_w = {-1};
  spec.mem_limit = zb::MemoryLimit{limit, false};
  return spec.build("bench");
}

// Unit costs (F = B = W = 1, no transfer time), the reference's memory deltas.
zb::Problem unit_problem(int p, int m, double limit) {
  zb::ProblemSpec spec;
  spec.devices = p;
  spec.microbatches = m;
  spec.t_f = {1};
  spec.t_b = {1};
  spec.t_w = {1};
  spec.t_comm = {0};
  spec.mem_f = {2};
  spec.mem_b = {-1};
  spec.mem_w = {-1};
  spec.mem_limit = zb::MemoryLimit{limit, false};
  return spec.build("bench");
}

// Every p <= 4, m <= 12, at unit and at 1.5B costs, at every memory limit from the least any
// schedule needs (2: one microbatch in flight) to the unlimited one (2m: every F first) in steps
// of 1 (the memory deltas are integers, so no limit in between allows another order): one line per
// (costs, p, m) with how many limits were proven optimal, by what, and the slowest solve.
int sweep_small(const zb::IlpOptions& options) {
  fmt::print("zb-ilp on every p <= 4, m <= 12, limits 2..2m: CBC node budget {}, search node budget {}, wall-clock "
             "safety net {} s\n",
             options.node_limit, options.search_node_limit, options.time_limit_s);
  fmt::print("{:<5} {:>2} {:>2} | {:>6} {:>7} | {:>5} {:>6} {:>4} {:>4} | {:>7} {:>7}\n", "costs", "p", "m", "limits",
             "optimal", "bound", "search", "milp", "open", "worst%", "max_s");
  int cases = 0, optimal = 0, over_minute = 0;
  double total_seconds = 0, slowest = 0;
  for (const bool unit : {true, false}) {
    for (int p = 1; p <= 4; ++p) {
      for (int m = 1; m <= 12; ++m) {
        int limits = 0, proven = 0, by_bound = 0, by_search = 0, by_milp = 0, open = 0;
        double worst_gap = 0, max_seconds = 0;
        for (int limit = 2; limit <= 2 * m; ++limit) {
          const zb::Problem problem = unit ? unit_problem(p, m, limit) : paper_problem(p, m, limit);
          const zb::IlpResult result = zb::solve_ilp(problem, options);
          ++limits;
          proven += result.status == zb::IlpStatus::optimal ? 1 : 0;
          by_bound += result.proof == zb::IlpProof::lower_bound ? 1 : 0;
          by_search += result.proof == zb::IlpProof::search ? 1 : 0;
          by_milp += result.proof == zb::IlpProof::milp || result.proof == zb::IlpProof::time_windows ? 1 : 0;
          open += result.status == zb::IlpStatus::optimal ? 0 : 1;
          worst_gap = std::max(worst_gap, result.gap);
          max_seconds = std::max(max_seconds, result.solve_seconds);
          over_minute += result.solve_seconds > 60 ? 1 : 0;
          total_seconds += result.solve_seconds;
        }
        cases += limits;
        optimal += proven;
        slowest = std::max(slowest, max_seconds);
        fmt::print("{:<5} {:>2} {:>2} | {:>6} {:>7} | {:>5} {:>6} {:>4} {:>4} | {:>7.3f} {:>7.2f}\n", unit ? "unit" : "1.5B",
                   p, m, limits, proven, by_bound, by_search, by_milp, open, 100 * worst_gap, max_seconds);
        std::fflush(stdout);
      }
    }
  }
  fmt::print("\n{} cases: {} proven optimal, {} open; slowest {:.2f} s, {} over 60 s; {:.1f} s in zb-ilp\n", cases, optimal,
             cases - optimal, slowest, over_minute, total_seconds);
  return 0;
}

// The order search alone (no CBC) on one problem, from zb-auto's span, under the given budgets.
int search_one(int p, int m, double times_p, const zb::IlpOptions& options) {
  const double limit = times_p * p * 2;
  const zb::Problem problem = paper_problem(p, m, limit);
  const double heuristic = zb::greedy_schedule(problem, limit).span;
  const double bound = std::max(zb::span_lower_bound(problem, limit).span, zb::sequence_lower_bound(problem, limit));
  zb::OrderSearchOptions search;
  search.memory_limit = limit;
  search.step = 0.001;  // the 1.5B costs are multiples of a microsecond
  search.lower_bound = bound;
  search.node_limit = options.search_node_limit;
  search.work_limit = options.search_work_limit;
  search.time_limit_s = options.time_limit_s;
  const auto start = std::chrono::steady_clock::now();
  const zb::OrderSearchResult found = zb::search_in_order_schedules(problem, heuristic, search);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double best_bound = found.complete ? found.span : std::max(bound, found.root_bound);
  fmt::print("p={} m={} limit {:g}p: zb-auto {:.3f}, lower bound {:.3f}, search root bound {:.3f}; search best {:.3f} "
             "({}), gap {:.3f}%, zb-auto {:.3f}% above it; {} nodes, {} cells, {:.2f} s{}\n",
             p, m, times_p, heuristic, bound, found.root_bound, found.span,
             found.complete ? "complete: the in-order optimum" : "cut short", 100 * (found.span - best_bound) / found.span,
             100 * (heuristic - found.span) / found.span, found.nodes, found.work, seconds,
             found.stopped_by_wall_clock ? " (wall-clock safety net fired)" : "");
  return 0;
}

// zb-ilp's starts without the search or CBC: how far each gets toward the bound, and how fast.
int local_one(int p, int m, double times_p, int window, std::int64_t evaluations) {
  const double limit = times_p * p * 2;
  const zb::Problem problem = paper_problem(p, m, limit);
  const double bound = std::max(zb::span_lower_bound(problem, limit).span, zb::sequence_lower_bound(problem, limit));
  auto gap = [&](double span) { return std::max(0.0, 100 * (span - bound) / span); };
  fmt::print("p={} m={} limit {:g}p: lower bound {:.3f}\n", p, m, times_p, bound);
  auto search_from = [&](std::string_view name, const zb::Schedule& start, double span, double start_seconds) {
    const auto begin = std::chrono::steady_clock::now();
    const zb::LocalSearchResult local = zb::improve_order_locally(problem, start, limit, evaluations, window);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    fmt::print("  {:<12} {:>10.3f} ({:.3f}%, {:.2f} s) -> local search (window {}) {:>10.3f} ({:.3f}%) in {} timings, "
               "{} moves, {:.2f} s\n",
               name, span, gap(span), start_seconds, window, local.span, gap(local.span), local.evaluations, local.moves,
               seconds);
  };
  auto begin = std::chrono::steady_clock::now();
  const zb::GreedyResult greedy = zb::greedy_schedule(problem, limit);
  search_from("zb-auto", greedy.schedule, greedy.span,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
  begin = std::chrono::steady_clock::now();
  const std::optional<zb::Capped1f1bResult> capped = zb::best_capped_1f1b(problem, limit);
  const double capped_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  if (capped) {
    search_from("capped 1F1B", capped->schedule, capped->span, capped_seconds);
  } else {
    fmt::print("  capped 1F1B: no order fits\n");
  }
  return 0;
}

[[noreturn]] void usage(std::string_view why) {
  fmt::print(stderr, "zb_bench_certify: {}\nusage: zb_bench_certify [--node-limit N] [--time-limit S] [--max-p P] "
                     "[--only-p P] [--threads T] [--only-m M] [--only-limit TIMES_P] [--search-nodes N] [--search-work N] [--small] "
                     "[--search P M TIMES_P] [--local P M TIMES_P] [--window W] [--local-evals N]\n", why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  zb::IlpOptions options;
  options.node_limit = 5000;  // the 60 s target: about 127 nodes per CPU second at p=4 m=12 (ilp_solver.h)
  options.time_limit_s = 60;
  options.search_node_limit = 20'000'000;  // the work budget below binds first
  options.search_work_limit = 3'000'000'000;  // about 30 s here at load 9
  int max_p = 16;
  int only_p = 0;  // 0: every p up to max_p
  bool small = false;
  int only_m = 0;           // 0: every m
  double only_times_p = 0;  // 0: every limit
  int search_p = 0, search_m = 0;  // --search or --local: 0 when not given
  double search_times_p = 0;
  bool local = false;  // --local instead of --search
  long window = 8;
  long long local_evaluations = zb::IlpOptions{}.local_search_evaluations;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--small") {
      small = true;
      continue;
    }
    if (flag == "--search" || flag == "--local") {
      local = flag == "--local";
      if (i + 3 >= argc) usage(flag + " needs P M TIMES_P");
      char* end_p = nullptr;
      char* end_m = nullptr;
      char* end_t = nullptr;
      search_p = static_cast<int>(std::strtol(argv[i + 1], &end_p, 10));
      search_m = static_cast<int>(std::strtol(argv[i + 2], &end_m, 10));
      search_times_p = std::strtod(argv[i + 3], &end_t);
      if (*end_p != '\0' || *end_m != '\0' || *end_t != '\0' || search_p < 1 || search_m < 1 || !(search_times_p > 0)) {
        usage(fmt::format("{} {} {} {}: P and M must be positive integers, TIMES_P a positive number", flag, argv[i + 1],
                          argv[i + 2], argv[i + 3]));
      }
      i += 3;
      continue;
    }
    if (i + 1 >= argc) usage(fmt::format("{} needs a value", flag));
    char* end = nullptr;
    const char* text = argv[++i];
    if (flag == "--node-limit") {
      options.node_limit = std::strtoll(text, &end, 10);
    } else if (flag == "--time-limit") {
      options.time_limit_s = std::strtod(text, &end);
    } else if (flag == "--max-p") {
      max_p = static_cast<int>(std::strtol(text, &end, 10));
    } else if (flag == "--only-p") {
      only_p = static_cast<int>(std::strtol(text, &end, 10));
    } else if (flag == "--only-m") {
      only_m = static_cast<int>(std::strtol(text, &end, 10));
    } else if (flag == "--only-limit") {
      only_times_p = std::strtod(text, &end);
    } else if (flag == "--search-nodes") {
      options.search_node_limit = std::strtoll(text, &end, 10);
    } else if (flag == "--search-work") {
      options.search_work_limit = std::strtoll(text, &end, 10);
    } else if (flag == "--window") {
      window = std::strtol(text, &end, 10);
    } else if (flag == "--local-evals") {
      local_evaluations = std::strtoll(text, &end, 10);
    } else if (flag == "--threads") {
      options.threads = static_cast<int>(std::strtol(text, &end, 10));
    } else {
      usage(fmt::format("unknown option {}", flag));
    }
    if (end == text || *end != '\0') usage(fmt::format("{}: {} is not a number", flag, text));
  }
  if (options.node_limit < 1 || !(options.time_limit_s > 0) || options.threads < 1 || options.search_node_limit < 0) {
    usage("limits must be positive");
  }
  if (small) return sweep_small(options);
  if (search_p > 0 && local) {
    if (window < 1 || local_evaluations < 1) usage("--window and --local-evals must be positive");
    return local_one(search_p, search_m, search_times_p, static_cast<int>(window), local_evaluations);
  }
  if (search_p > 0) return search_one(search_p, search_m, search_times_p, options);

  fmt::print("zb-ilp certificates, 1.5B costs, CBC node budget {}, search budget {} nodes / {} cells, wall-clock "
             "safety net {} s, {} thread(s)\n",
             options.node_limit, options.search_node_limit, options.search_work_limit, options.time_limit_s,
             options.threads);
  fmt::print("{:>3} {:>3} {:>5} | {:>10} {:>10} {:>10} | {:<8} {:>6} | {:>10} {:<8} {:>6} {:<12} {:>6} {:>7}\n",
             "p", "m", "limit", "zb-auto", "bound", "seq-bound", "before", "gap%", "zb-ilp", "after", "gap%", "proof", "nodes", "time_s");
  int cases = 0, before_optimal = 0, after_optimal = 0, by_milp = 0, by_search = 0, within_half_percent = 0;
  double total_seconds = 0;
  for (int p : {4, 8, 16}) {
    if (p > max_p || (only_p != 0 && p != only_p)) continue;
    for (int m : {2 * p, 3 * p, 4 * p}) {
      if (only_m != 0 && m != only_m) continue;
      for (double times_p : {1.0, 1.25, 1.5, 2.0, 2.5, 3.0}) {
        if (only_times_p != 0 && times_p != only_times_p) continue;
        const double limit = times_p * p * 2;
        const zb::Problem problem = paper_problem(p, m, limit);
        const double heuristic = zb::greedy_schedule(problem, limit).span;
        const double bound = zb::span_lower_bound(problem, limit).span;  // the closed forms alone
        const double sequence = zb::sequence_lower_bound(problem, limit);
        const double before_gap = heuristic > 0 ? std::max(0.0, (heuristic - bound) / heuristic) : 0.0;
        const bool before_proven = before_gap <= 1e-6;
        const zb::IlpResult result = zb::solve_ilp(problem, options);
        ++cases;
        before_optimal += before_proven ? 1 : 0;
        after_optimal += result.status == zb::IlpStatus::optimal ? 1 : 0;
        by_milp += result.proof == zb::IlpProof::milp || result.proof == zb::IlpProof::time_windows ? 1 : 0;
        by_search += result.proof == zb::IlpProof::search ? 1 : 0;
        within_half_percent += result.gap <= 0.005 ? 1 : 0;
        total_seconds += result.solve_seconds;
        fmt::print("{:>3} {:>3} {:>4g}p | {:>10.3f} {:>10.3f} {:>10.3f} | {:<8} {:>6.3f} | {:>10.3f} {:<8} {:>6.3f} {:<12} {:>6} "
                   "{:>6.2f}{}\n",
                   p, m, times_p, heuristic, bound, sequence, before_proven ? "optimal" : "feasible", 100 * before_gap,
                   result.span, zb::ilp_status_name(result.status), 100 * result.gap, zb::ilp_proof_name(result.proof),
                   result.nodes, result.solve_seconds, result.stopped_by_wall_clock ? " !" : "");
        std::fflush(stdout);
      }
    }
  }
  fmt::print("\n{} cases: optimal before {} (lower bound meets zb-auto), after {} ({} proved by the MILP or its "
             "time windows, {} by the order search); gap <= 0.5% after: {}; {:.1f} s in zb-ilp\n",
             cases, before_optimal, after_optimal, by_milp, by_search, within_half_percent, total_seconds);
  return 0;
}
