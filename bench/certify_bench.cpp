// zb-ilp's certificates on the 54-case table: the paper's 1.5B costs (18.522 / 18.086 / 9.337 ms,
// t_comm 0.601 ms, memory 2 / -1 / -1 per microbatch as in the reference implementation) at
// p = 4, 8, 16, m = 2p, 3p, 4p and memory limits 1, 1.25, 1.5, 2, 2.5, 3 times p * M_B.
// Per case, "before" is what the closed-form lower bound alone certifies about zb-auto (the state
// before this table existed); "seq-bound" is the single-stage program (sequence_lower_bound), "after" is zb-ilp: status, gap, what proved it (lower-bound, time-windows,
// milp), nodes and wall time. The node budget decides the result (deterministic); the wall clock
// is only a safety net, and a `!` marks the cases where it fired.
//
//   ./build/bench/zb_bench_certify [--node-limit N] [--time-limit S] [--max-p P] [--only-p P] [--threads T]
#include <fmt/format.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sim/schedule/problem_spec.h"
#include "sim/solver/greedy_schedule.h"
#include "sim/solver/ilp_solver.h"
#include "sim/solver/lower_bound.h"

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

[[noreturn]] void usage(std::string_view why) {
  fmt::print(stderr, "zb_bench_certify: {}\nusage: zb_bench_certify [--node-limit N] [--time-limit S] [--max-p P] "
                     "[--only-p P] [--threads T]\n", why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  zb::IlpOptions options;
  options.node_limit = 5000;  // the 60 s target: about 127 nodes per CPU second at p=4 m=12 (ilp_solver.h)
  options.time_limit_s = 60;
  int max_p = 16;
  int only_p = 0;  // 0: every p up to max_p
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
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
    } else if (flag == "--threads") {
      options.threads = static_cast<int>(std::strtol(text, &end, 10));
    } else {
      usage(fmt::format("unknown option {}", flag));
    }
    if (end == text || *end != '\0') usage(fmt::format("{}: {} is not a number", flag, text));
  }
  if (options.node_limit < 1 || !(options.time_limit_s > 0) || options.threads < 1) usage("limits must be positive");

  fmt::print("zb-ilp certificates, 1.5B costs, node budget {}, wall-clock safety net {} s, {} thread(s)\n",
             options.node_limit, options.time_limit_s, options.threads);
  fmt::print("{:>3} {:>3} {:>5} | {:>10} {:>10} {:>10} | {:<8} {:>6} | {:>10} {:<8} {:>6} {:<12} {:>6} {:>7}\n",
             "p", "m", "limit", "zb-auto", "bound", "seq-bound", "before", "gap%", "zb-ilp", "after", "gap%", "proof", "nodes", "time_s");
  int cases = 0, before_optimal = 0, after_optimal = 0, by_milp = 0, within_half_percent = 0;
  double total_seconds = 0;
  for (int p : {4, 8, 16}) {
    if (p > max_p || (only_p != 0 && p != only_p)) continue;
    for (int m : {2 * p, 3 * p, 4 * p}) {
      for (double times_p : {1.0, 1.25, 1.5, 2.0, 2.5, 3.0}) {
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
             "time windows); gap <= 0.5% after: {}; {:.1f} s in zb-ilp\n",
             cases, before_optimal, after_optimal, by_milp, within_half_percent, total_seconds);
  return 0;
}
