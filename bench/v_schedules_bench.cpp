// The V schedules in process: zb-v (the greedy ZB-V) and v-auto (the building-block search) at
// unit-like costs (t_f = t_b = t_w = 2 per device, no transfers, the default memory rules and
// limit: p * M_B), the shape of `zbsim compare --p 32 --m 256 --tf 2 --tb 2 --tw 2`; zb-v also at
// the official check's unequal per-chunk costs (5, 6, 4, t_comm 1), where no candidate reaches zero
// bubble and all four run with their refinement.
// Median and min of 5 repetitions: ./bench/zb_bench_v (build folder); --benchmark_filter=VAuto etc.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "sim/core/problem_spec.h"
#include "sim/solver/detail/v_controllable.h"
#include "sim/solver/detail/zb_v_greedy.h"

namespace {

zb::Problem v_problem(int p, int m, double tf = 2, double tb = 2, double tw = 2, double tcomm = 0) {
  zb::ProblemSpec spec;
  spec.devices = p;
  spec.microbatches = m;
  spec.chunks = 2;
  spec.placement = zb::Placement::vshape;
  spec.t_f = {tf};
  spec.t_b = {tb};
  spec.t_w = {tw};
  spec.t_comm = {tcomm};
  return spec.build("bench");
}

void BM_ZbV(benchmark::State& state) {
  const zb::Problem problem = v_problem(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    const zb::ZbVResult result = zb::zb_v_greedy(problem);
    benchmark::DoNotOptimize(result.schedule.devices.data());
  }
}

void BM_ZbVUnequal(benchmark::State& state) {
  const zb::Problem problem = v_problem(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), 10, 12, 8, 1);
  for (auto _ : state) {
    const zb::ZbVResult result = zb::zb_v_greedy(problem);
    benchmark::DoNotOptimize(result.schedule.devices.data());
  }
}

void BM_VAuto(benchmark::State& state) {
  const zb::Problem problem = v_problem(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)));
  for (auto _ : state) {
    const zb::Schedule schedule = zb::make_v_auto(problem);
    benchmark::DoNotOptimize(schedule.devices.data());
  }
}

// The 6.2B ZB-V profile's per-chunk costs (us: 14407 / 14380 / 9676, t_comm 1610), where no block
// reaches the busiest device's work, so v-auto ranks (and descends through) every level that fits.
void BM_VAutoProfiled(benchmark::State& state) {
  const zb::Problem problem =
      v_problem(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)), 2 * 14407, 2 * 14380, 2 * 9676, 1610);
  for (auto _ : state) {
    const zb::Schedule schedule = zb::make_v_auto(problem);
    benchmark::DoNotOptimize(schedule.devices.data());
  }
}

// p, m: two small shapes, the paper's p=8 m=24, and the p=32 m=256.
void shapes(benchmark::internal::Benchmark* bench) {
  bench->Args({4, 8})->Args({8, 24})->Args({16, 64})->Args({32, 256});
  bench->Repetitions(5)->ReportAggregatesOnly(true)->ComputeStatistics("min", [](const std::vector<double>& v) {
    return *std::min_element(v.begin(), v.end());
  });
  bench->Unit(benchmark::kMillisecond);
}
BENCHMARK(BM_ZbV)->Apply(shapes);
BENCHMARK(BM_ZbVUnequal)->Apply(shapes);
BENCHMARK(BM_VAuto)->Apply(shapes);
BENCHMARK(BM_VAutoProfiled)->Apply(shapes);

}  // namespace
