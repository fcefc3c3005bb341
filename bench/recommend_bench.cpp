// zbsim recommend for Llama-3 70B on 8 nodes x 8 H100 (cluster 8x8-ib400), timed as one run (the
// whole search is the unit a user waits for): candidates searched, pruned and evaluated, the
// winner, and the wall time against the 60 s target of issue 16 on 2 cores.
//   ./bench/zb_bench_recommend [--global-batch B] [--jobs N] [--simgrid] [--exhaustive]
// --exhaustive evaluates every candidate (PlanQuery::prune = false): the reference the pruned
// search's top 10, printed one a line, must equal.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <cstring>

#include "sim/app/plan/plan_search.h"

int main(int argc, char** argv) {
  zb::plan::PlanQuery query;
  query.model = "llama3-70b";
  query.hardware = "h100-sxm";
  query.cluster = "8x8-ib400";
  query.global_batch = 64;
  query.jobs = 2;
  query.confirm_simgrid = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--global-batch") && i + 1 < argc) query.global_batch = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--jobs") && i + 1 < argc) query.jobs = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--simgrid")) query.confirm_simgrid = true;
    else if (!std::strcmp(argv[i], "--exhaustive")) query.prune = false;
  }
  const auto start = std::chrono::steady_clock::now();
  const zb::plan::PlanSearch search = zb::plan::search_plans(query);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("recommend {} on {} GPUs ({}), global batch {}, {} jobs{}{}\n", query.model, search.gpus, query.cluster,
             query.global_batch, query.jobs, query.confirm_simgrid ? ", SimGrid for the top" : "",
             query.prune ? "" : ", exhaustive");
  fmt::print("candidates {}  pruned on memory {}  pruned by bound {}  evaluated {} (over memory {}, not buildable {})\n",
             search.candidates, search.pruned_memory, search.pruned_bound, search.evaluated, search.over_limit,
             search.unsupported);
  const auto& best = search.top.front();
  fmt::print("best: {}  step {:.3f} s  {:.4f} samples/s/GPU  MFU {:.1f}%  {:.1f} GB\n", best.candidate.label(),
             best.step_time_s, best.samples_per_s_per_gpu, 100 * best.mfu, best.memory_GB);
  for (const auto& r : search.top) fmt::print("  {:.6f} s  {:.2f} GB  {}\n", r.step_time_s, r.memory_GB, r.candidate.label());
  fmt::print("wall {:.1f} s (target: under 60 s on 2 cores) {}\n", seconds, seconds < 60 ? "ok" : "OVER");
  return 0;
}
