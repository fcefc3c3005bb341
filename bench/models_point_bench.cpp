// One model-driven sweep point without the CLI: cost model, then ZB-H1 generation and evaluation.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "models/model_setup.h"
#include "sim/app/catalog/model_costs.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generators.h"
#include "sim/app/catalog/preset_files.h"

namespace {

const zb::models::ModelSetup& llama3_8b_on_h200() {
  static const zb::models::ModelSetup setup = zb::models::model_setup_from_json(
      {{"model", "llama3-8b"}, {"hardware", "h200"}, {"cluster", "1x8-nvlink"}, {"split", "paper"},
       {"flash_attention", true}},
      "bench", ".", zb::catalog::read_preset_file);
  return setup;
}

// The cost model alone: per-stage times, bytes and memory for p = 8.
void BM_CostModel(benchmark::State& state) {
  const auto& setup = llama3_8b_on_h200();
  for (auto _ : state) {
    zb::ProblemSpec spec;
    spec.devices = 8;
    spec.microbatches = 32;
    zb::catalog::apply_model_costs(setup, spec, {}, "bench");
    benchmark::DoNotOptimize(spec.t_f.data());
  }
}
BENCHMARK(BM_CostModel);

// A whole point: cost model, problem, ZB-H1, evaluation without spans (what a sweep row needs).
void BM_ModelPoint(benchmark::State& state) {
  const auto& setup = llama3_8b_on_h200();
  const int m = static_cast<int>(state.range(0));
  for (auto _ : state) {
    zb::ProblemSpec spec;
    spec.devices = 8;
    spec.microbatches = m;
    zb::catalog::apply_model_costs(setup, spec, {}, "bench");
    const zb::Problem problem = spec.build();
    const zb::Schedule schedule = zb::make_zb_h1(problem);
    zb::Trace trace = zb::evaluate(problem, schedule, {false, false, true});
    benchmark::DoNotOptimize(trace.metrics.span);
  }
}
BENCHMARK(BM_ModelPoint)->Arg(32)->Arg(256);

}  // namespace
