// Benchmarks of the executor's CPU backend: one GEMM, one stage's F, B and W, and a whole step.
#include <benchmark/benchmark.h>

#include "exec/cpu/cpu_backend.h"
#include "exec/runtime/engine.h"
#include "sim/app/catalog/generators.h"
#include "exec/runtime/stage_model.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/problem_spec.h"

namespace zb::exec {
namespace {

// state.range(0) = hidden, state.range(1) = rows per microbatch.
ModelConfig config_for(const benchmark::State& state, int layers) {
  ModelConfig config;
  config.layers = layers;
  config.hidden = static_cast<int>(state.range(0));
  config.microbatch_size = static_cast<int>(state.range(1));
  return config;
}

void BM_Sgemm(benchmark::State& state) {
  use_single_threaded_blas();
  CpuDevice device(0, CpuDevice::Clock::now());
  const auto h = static_cast<int>(state.range(0));
  const auto rows = static_cast<int>(state.range(1));
  Tensor x = device.alloc(rows, h);
  Tensor w = device.alloc(4 * h, h);
  Tensor out = device.alloc(rows, 4 * h);
  for (auto _ : state) {
    device.gemm(false, true, 1.0f, x, w, 0.0f, out);
    benchmark::DoNotOptimize(out.data());
  }
  // FLOP per second of the GEMM (reported by Google Benchmark with SI prefixes, e.g. 50G/s).
  state.counters["FLOP"] = benchmark::Counter(2.0 * rows * h * 4.0 * h,
                                              benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Sgemm)->Args({256, 16})->Args({512, 16})->Args({1024, 8});

// F, B and W of one microbatch through a 4-block stage (the pass costs calibrate measures).
void BM_StagePasses(benchmark::State& state) {
  use_single_threaded_blas();
  CpuDevice device(0, CpuDevice::Clock::now());
  const ModelConfig config = config_for(state, 4);
  StageModel stage(device, config, 0, 1, 1);
  Tensor input = device.alloc(config.microbatch_size, config.hidden);
  device.upload(input, synthetic_input(config, 0, 0));
  Tensor target = device.alloc(config.microbatch_size, config.hidden);
  device.upload(target, synthetic_target(config, 0, 0));
  const int pass = static_cast<int>(state.range(2));  // 0: F, 1: B, 2: W
  for (auto _ : state) {
    stage.begin_step();
    if (pass != 0) state.PauseTiming();
    stage.forward(0, input, target);
    if (pass == 0) state.PauseTiming();
    if (pass == 1) state.ResumeTiming();
    stage.backward_input(0, Tensor());
    if (pass == 1) state.PauseTiming();
    if (pass == 2) state.ResumeTiming();
    stage.backward_weight(0);
    if (pass == 0 || pass == 1) state.ResumeTiming();
  }
  state.SetLabel(pass == 0 ? "F" : pass == 1 ? "B" : "W");
}
BENCHMARK(BM_StagePasses)->Args({256, 16, 0})->Args({256, 16, 1})->Args({256, 16, 2})->Unit(benchmark::kMicrosecond);

// One training step of zb-h1 on p = 2 CPU devices (threads), m = 8, 8 blocks.
void BM_PipelineStep(benchmark::State& state) {
  zb::ProblemSpec spec;
  spec.devices = 2;
  spec.microbatches = 8;
  spec.t_f = {1.0};
  spec.t_b = {1.0};
  spec.t_w = {1.0};
  const zb::Problem problem = spec.build("bench");
  const zb::Schedule schedule = zb::generate(zb::catalog::generators(), "zb-h1", problem);
  ExecOptions options;
  options.model = config_for(state, 8);
  options.steps = 1;
  CpuBackend backend(2);
  for (auto _ : state) {
    const ExecResult result = run_schedule(backend, problem, schedule, options);
    benchmark::DoNotOptimize(result.weights.data());
  }
}
BENCHMARK(BM_PipelineStep)->Args({256, 16})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace zb::exec
