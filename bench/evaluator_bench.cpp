// Evaluator throughput: actions per second on p=64, m=4096 ZB-H1 (target: 20 M/s on one core).
#include <benchmark/benchmark.h>

#include "sim/schedule/evaluator.h"
#include "sim/schedule/generators.h"
#include "sim/schedule/problem_spec.h"

namespace {

zb::Problem paper_like_problem(int p, int m) {
  zb::ProblemSpec spec;
  spec.devices = p;
  spec.microbatches = m;
  spec.t_f = {18.522};
  spec.t_b = {18.086};
  spec.t_w = {9.337};
  spec.t_comm = {0.601};
  return spec.build();
}

void run(benchmark::State& state, zb::EvalOptions options) {
  const zb::Problem problem = paper_like_problem(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  const zb::Schedule schedule = zb::make_zb_h1(problem);
  for (auto _ : state) {
    zb::Trace trace = zb::evaluate(problem, schedule, options);
    benchmark::DoNotOptimize(trace.metrics.span);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * schedule.action_count()));
  state.counters["actions"] = static_cast<double>(schedule.action_count());
}

void BM_EvaluateMetricsOnly(benchmark::State& state) {
  run(state, {.record_spans = false, .record_transfers = false, .record_memory = false});
}
void BM_EvaluateFullTrace(benchmark::State& state) { run(state, {}); }
void BM_EvaluateComputeSpans(benchmark::State& state) {
  run(state, {.record_spans = true, .record_transfers = false, .record_memory = false});
}

}  // namespace

BENCHMARK(BM_EvaluateMetricsOnly)->Args({64, 4096})->Args({8, 24})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EvaluateComputeSpans)->Args({64, 4096})->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EvaluateFullTrace)->Args({64, 4096})->Unit(benchmark::kMillisecond);
namespace {
void BM_EvaluateSpansAndMemory(benchmark::State& state) {
  run(state, {.record_spans = true, .record_transfers = false, .record_memory = true});
}
}  // namespace
BENCHMARK(BM_EvaluateSpansAndMemory)->Args({64, 4096})->Unit(benchmark::kMillisecond);
