// The optimizer update at memory bandwidth, the data-parallel all-reduce, and the throughput of a
// step (samples, tokens, MFU) on small hand-checked setups.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/cost_model.h"
#include "models/detail/kernel_time.h"
#include "models/detail/layer_costs.h"
#include "models/detail/optimizer_cost.h"
#include "models/setup_infeasible.h"
#include "models/throughput.h"
#include "sim/app/catalog/model_costs.h"
#include "tests/models/tiny_scenario.h"
#include "sim/app/catalog/preset_files.h"

namespace zb::models {
namespace {

using testing::tiny_scenario;

PipelineShape shape(int p, int m = 8) {
  Problem problem;
  problem.devices = p;
  problem.microbatches = m;
  return catalog::pipeline_shape(problem);
}

TEST(OptimizerCost, TheUpdateMovesEveryStateByteTwiceAtMemoryBandwidth) {
  const ModelSetup setup = model_setup_from_json(tiny_scenario(), "tiny", ".", catalog::read_preset_file);
  EXPECT_DOUBLE_EQ(optimizer_update_ms(3.0, setup.hardware), 6.0);  // 6 GB at 1000 GB/s
  HardwareSpec unknown = setup.hardware;
  unknown.memory_bandwidth_GBps = 0;
  EXPECT_DOUBLE_EQ(optimizer_update_ms(3.0, unknown), 0);
  ProblemSpec spec;
  spec.devices = 4;
  spec.microbatches = 8;
  catalog::apply_model_costs(setup, spec, {}, "tiny");
  const StageCosts costs = stage_costs(setup, shape(4), "tiny");
  ASSERT_EQ(spec.t_opt.size(), 4U);
  for (int d = 0; d < 4; ++d) EXPECT_DOUBLE_EQ(spec.t_opt[d], 2 * costs.static_GB[d] / 1000 * 1e3);
  EXPECT_TRUE(spec.t_dp_reduce.empty());  // no data parallelism
  ProblemSpec kept;
  kept.devices = 4;
  kept.microbatches = 8;
  kept.t_opt = {7};
  catalog::apply_model_costs(setup, kept, {"t_opt"}, "tiny");
  EXPECT_EQ(kept.t_opt, (std::vector<double>{7}));
}

// The data-parallel all-reduce is the ring of kernel_time.h: 2 (n - 1) messages of bytes / n,
// each latency + size / (bandwidth x collective efficiency).
TEST(OptimizerCost, RingAllReduce) {
  const Link link{10, 5};  // 10 GB/s, 5 us
  HardwareSpec gpu;
  EXPECT_DOUBLE_EQ(all_reduce_ms(gpu, link, 1, 4e9), 0);
  EXPECT_DOUBLE_EQ(all_reduce_ms(gpu, link, 4, 4e9), 6 * (0.005 + 1e9 / 10e9 * 1e3));
  gpu.efficiency.collective_efficiency = 0.5;
  EXPECT_DOUBLE_EQ(all_reduce_ms(gpu, link, 4, 4e9), 6 * (0.005 + 1e9 / 5e9 * 1e3));
}

// FSDP on one stage (no pipeline), data_parallel 2 on the NVLink of a 2-GPU node: each layer's
// 16-bit parameters are gathered before F and before B and its gradients reduce-scattered after W,
// behind the compute (a pass takes the longer of the two); there is no separate all-reduce. With a
// pipeline the gathered parameters stay for the step: the per-stage reduction is charged instead.
TEST(OptimizerCost, FsdpGathersEveryLayerOnOneStageOnly) {
  nlohmann::json scenario = tiny_scenario();
  scenario["data_parallel"] = 2;
  scenario["sharding"] = "fsdp";
  scenario["hardware"]["nvlink"]["bandwidth_GBps"] = 0.01;  // slow enough that the transfers decide
  const ModelSetup setup = model_setup_from_json(scenario, "tiny", ".", catalog::read_preset_file);
  // A ring of 2 gathers in one step: 2 us + half the 16-bit bytes at 0.01 GB/s (1e4 bytes per ms).
  const auto gather_ms = [](double params) { return 0.002 + 0.5 * params * 2 / 1e4; };
  const double layer = gather_ms(layer_params_per_gpu(setup));
  const double ends = gather_ms(embedding_params_per_gpu(setup)) + gather_ms(output_params_per_gpu(setup));
  ASSERT_GT(layer, layer_costs(setup).t_b_ms);
  const StageCosts one = stage_costs(setup, shape(1), "tiny");
  EXPECT_NEAR(one.t_f_ms[0], 4 * layer + ends, 1e-9);
  EXPECT_NEAR(one.t_b_ms[0], 4 * layer + ends, 1e-9);
  EXPECT_NEAR(one.t_w_ms[0], 4 * layer + ends, 1e-9);
  EXPECT_TRUE(dp_reduce_times_ms(setup, shape(1), one).empty());
  const StageCosts two = stage_costs(setup, shape(2), "tiny");
  EXPECT_NEAR(two.t_f_ms[1], 2 * layer_costs(setup).t_f_ms + output_costs(setup).t_f_ms, 1e-9);
  EXPECT_EQ(dp_reduce_times_ms(setup, shape(2), two).size(), 2U);
}

// data_parallel 2, p = 2 on nodes of 2 GPUs: device 0's two replicas on GPUs 0-1 (node 0), device
// 1's on GPUs 2-3 (node 1), so each stage's ring stays on NVLink while the pipeline crosses the NIC;
// p = 1 with data_parallel 2 stays in node 0 too.
TEST(OptimizerCost, DataParallelReducesEachStagesGradients) {
  nlohmann::json scenario = tiny_scenario();
  scenario["data_parallel"] = 2;
  const ModelSetup setup = model_setup_from_json(scenario, "tiny", ".", catalog::read_preset_file);
  EXPECT_EQ(setup.parallel.data, 2);
  ProblemSpec spec;
  spec.devices = 2;
  spec.microbatches = 8;
  catalog::apply_model_costs(setup, spec, {}, "tiny");
  const StageCosts costs = stage_costs(setup, shape(2), "tiny");
  ASSERT_EQ(spec.t_dp_reduce.size(), 2U);
  for (int s = 0; s < 2; ++s) {
    EXPECT_DOUBLE_EQ(spec.t_dp_reduce[s], all_reduce_ms(setup.hardware, setup.interconnect.intra_node, 2, costs.params[s] * 2));
  }
  ProblemSpec one;
  one.devices = 1;
  one.microbatches = 8;
  catalog::apply_model_costs(setup, one, {}, "tiny");
  const StageCosts single = stage_costs(setup, shape(1), "tiny");
  EXPECT_DOUBLE_EQ(one.t_dp_reduce[0], all_reduce_ms(setup.hardware, setup.interconnect.intra_node, 2, single.params[0] * 2));
  // A cluster of 4 GPUs holds dp = 2 pipelines of 2, not dp = 3.
  nlohmann::json small = tiny_scenario();
  small["cluster"] = nlohmann::json::parse(R"({"nodes": 2, "gpus_per_node": 2,
      "intra_node": {"bandwidth_GBps": 100, "latency_us": 2}, "inter_node": {"bandwidth_GBps": 10, "latency_us": 10}})");
  small["data_parallel"] = 3;
  const ModelSetup crowded = model_setup_from_json(small, "small", ".", catalog::read_preset_file);
  EXPECT_THROW(catalog::apply_model_costs(crowded, spec, {}, "small"), SetupInfeasible);
  small["data_parallel"] = 0;
  EXPECT_THROW(model_setup_from_json(small, "small", ".", catalog::read_preset_file), InputError);
}

// Samples = m b dp, tokens = samples s, flops = every layer's F + B + W and the ends', per sample.
TEST(Throughput, SamplesTokensAndMfuOfAStep) {
  nlohmann::json scenario = tiny_scenario();
  scenario["data_parallel"] = 2;
  const ModelSetup setup = model_setup_from_json(scenario, "tiny", ".", catalog::read_preset_file);
  const StepWork work = step_work(setup, shape(2, 8), "tiny");
  EXPECT_DOUBLE_EQ(work.samples, 8 * 2 * 2);
  EXPECT_DOUBLE_EQ(work.tokens, 32 * 512);
  EXPECT_EQ(work.gpus, 4);
  const PieceCosts layer = layer_costs(setup);
  const PieceCosts output = output_costs(setup);
  const double per_microbatch = 4 * (layer.flops_f + layer.flops_b + layer.flops_w) + output.flops_f +
                                output.flops_b + output.flops_w;  // the embedding has no flops
  EXPECT_DOUBLE_EQ(work.model_flops, per_microbatch * 8 * 2);
  EXPECT_EQ(work.static_GB, stage_costs(setup, shape(2), "tiny").static_GB);
  const Throughput figures = throughput(work, 0.5);
  EXPECT_DOUBLE_EQ(figures.samples_per_s_per_gpu, 32 / 0.5 / 4);
  EXPECT_DOUBLE_EQ(figures.tokens_per_s, 32 * 512 / 0.5);
  EXPECT_DOUBLE_EQ(figures.mfu, work.model_flops / (0.5 * 4 * 100e12));
  EXPECT_DOUBLE_EQ(throughput(work, 0).mfu, 0);
}

}  // namespace
}  // namespace zb::models
