// Evaluator throughput (issue 17: at least 30 M actions/s recording traces, 60 M/s metrics only,
// on one core). items_per_second is actions per CPU second (Google Benchmark divides by CPU time
// unless told otherwise), so a shared machine's waits do not count. Compare two builds in one
// session, alternating the binaries and keeping each case's best round:
//   for r in 1 2 3; do for b in base new; do
//     $b/bench/zb_bench_evaluator --benchmark_min_time=0.1 --benchmark_format=csv > run${r}_$b.csv; done; done
// Instructions per action do not depend on the machine's load (valgrind, one iteration):
//   valgrind --tool=callgrind --toggle-collect='*zb::evaluate*' build/bench/zb_bench_evaluator
//     --benchmark_filter='^BM_Trace/zb_h1/32$' --benchmark_min_time=0.000001   (I refs / actions)
// (valgrind counts a `rep stosb` byte by byte, so the memset that resets the finish times between
// steps shows as about one instruction per byte: 5 of the ~100 per action at zb_h1/32.)
//
// Cases: BM_Metrics / BM_Trace (every span, transfers and the memory timeline, as zbsim simulate
// records them) over schedules of one and two chunks at p = 8, 16, 32 with m = 4p and t_comm > 0,
// and the large ZB-H1 case (p=64, m=4096) in each recording mode.
#include <benchmark/benchmark.h>

#include <string>

#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/problem_spec.h"

namespace {

// The paper's 1.5B GPT stage times (ms), as in scenarios/paper.
zb::Problem paper_like_problem(int p, int m, int chunks, zb::Placement placement) {
  zb::ProblemSpec spec;
  spec.devices = p;
  spec.microbatches = m;
  spec.chunks = chunks;
  spec.placement = placement;
  spec.t_f = {18.522};
  spec.t_b = {18.086};
  spec.t_w = {9.337};
  spec.t_comm = {0.601};
  return spec.build();
}

const zb::EvalOptions kMetricsOnly{.record_spans = false, .record_transfers = false, .record_memory = false};
const zb::EvalOptions kFullTrace{};
const zb::EvalOptions kComputeSpans{.record_spans = true, .record_transfers = false, .record_memory = false};
const zb::EvalOptions kSpansAndMemory{.record_spans = true, .record_transfers = false, .record_memory = true};

void run(benchmark::State& state, const std::string& schedule_name, int p, int m, const zb::EvalOptions& options) {
  const zb::GeneratorRegistry registry = zb::GeneratorRegistry::with_builtins();
  const zb::GeneratorInfo& info = registry.get(schedule_name);
  const int chunks = info.chunks == zb::ChunkSupport::single ? 1 : 2;
  const zb::Placement placement =
      info.placement.value_or(chunks == 1 ? zb::Placement::linear : zb::Placement::interleaved);
  const zb::Problem problem = paper_like_problem(p, m, chunks, placement);
  const zb::Schedule schedule = zb::generate(registry, schedule_name, problem);
  for (auto _ : state) {
    zb::Trace trace = zb::evaluate(problem, schedule, options);
    benchmark::DoNotOptimize(trace.metrics.span);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * schedule.action_count()));
  state.counters["actions"] = static_cast<double>(schedule.action_count());
}

// Arg: p; m = 4p.
void BM_Metrics(benchmark::State& state, const char* schedule) {
  const int p = static_cast<int>(state.range(0));
  run(state, schedule, p, 4 * p, kMetricsOnly);
}
void BM_Trace(benchmark::State& state, const char* schedule) {
  const int p = static_cast<int>(state.range(0));
  run(state, schedule, p, 4 * p, kFullTrace);
}

// Args: p, m (ZB-H1).
void BM_LargeMetricsOnly(benchmark::State& state) {
  run(state, "zb-h1", static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), kMetricsOnly);
}
void BM_LargeComputeSpans(benchmark::State& state) {
  run(state, "zb-h1", static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), kComputeSpans);
}
void BM_LargeSpansAndMemory(benchmark::State& state) {
  run(state, "zb-h1", static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), kSpansAndMemory);
}
void BM_LargeFullTrace(benchmark::State& state) {
  run(state, "zb-h1", static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), kFullTrace);
}

}  // namespace

#define ZB_EVAL_CASES(bench)                                                                             \
  BENCHMARK_CAPTURE(bench, zb_h1, "zb-h1")->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMicrosecond);       \
  BENCHMARK_CAPTURE(bench, 1f1b, "1f1b")->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMicrosecond);         \
  BENCHMARK_CAPTURE(bench, 1f1b_i_v2, "1f1b-i")->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMicrosecond);  \
  BENCHMARK_CAPTURE(bench, zb_v_h_v2, "zb-v-h")->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMicrosecond);  \
  BENCHMARK_CAPTURE(bench, dualpipe_v_v2, "dualpipe-v")->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMicrosecond)

ZB_EVAL_CASES(BM_Metrics);
ZB_EVAL_CASES(BM_Trace);
BENCHMARK(BM_LargeMetricsOnly)->Args({64, 4096})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LargeComputeSpans)->Args({64, 4096})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LargeSpansAndMemory)->Args({64, 4096})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LargeFullTrace)->Args({64, 4096})->Unit(benchmark::kMillisecond);
