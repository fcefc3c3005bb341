// Stage costs, links, memory limits and splits of the cost model on small hand-checked setups.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/cost_model.h"
#include "models/detail/layer_costs.h"
#include "models/setup_infeasible.h"
#include "sim/support/error.h"
#include "sim/app/catalog/model_costs.h"
#include "tests/models/tiny_scenario.h"
#include "sim/app/catalog/preset_files.h"

namespace zb::models {
namespace {

using testing::tiny_scenario;

PipelineShape shape(int p, int v = 1) {
  Problem problem;
  problem.devices = p;
  problem.chunks = v;
  problem.placement = v == 1 ? Placement::linear : Placement::interleaved;
  return catalog::pipeline_shape(problem);
}

TEST(CostModel, StageTimesAreLayerFlopsOverEffectiveSpeed) {
  const ModelSetup setup = model_setup_from_json(tiny_scenario(), "tiny", ".", catalog::read_preset_file);
  const StageCosts costs = stage_costs(setup, shape(4), "tiny");
  const PieceCosts layer = layer_costs(setup);
  const PieceCosts output = output_costs(setup);
  const double flops_per_ms = 100e12 * 0.5 / 1e3;
  ASSERT_EQ(costs.layers, (std::vector<int>{1, 1, 1, 1}));
  EXPECT_DOUBLE_EQ(costs.t_f_ms[0], layer.flops_f / flops_per_ms);
  EXPECT_DOUBLE_EQ(costs.t_f_ms[1], layer.flops_f / flops_per_ms);
  EXPECT_DOUBLE_EQ(costs.t_b_ms[2], layer.flops_b / flops_per_ms);
  EXPECT_DOUBLE_EQ(costs.t_w_ms[3], (layer.flops_w + output.flops_w) / flops_per_ms);
  // A GPT layer of b = 2, s = 512, h = 1024: F = bsh(24h + 4s) = 1024*1024*26624 flops.
  EXPECT_DOUBLE_EQ(costs.t_f_ms[1], 2.0 * 512 * 1024 * (24 * 1024 + 4 * 512) / flops_per_ms);
  // Memory per stage: F adds M_B, B adds M_W - M_B, W frees M_W (GB); the first stage's embedding
  // gradient (2bsh bytes) and its dropout mask (bsh) wait from B to W.
  EXPECT_DOUBLE_EQ(costs.mem_f_GB[1], layer.act_b_bytes * 1e-9);
  EXPECT_DOUBLE_EQ(costs.mem_w_GB[1], -layer.act_w_bytes * 1e-9);
  EXPECT_DOUBLE_EQ(costs.mem_w_GB[0], -(layer.act_w_bytes + 3.0 * 2 * 512 * 1024) * 1e-9);
  for (int s = 0; s < 4; ++s) EXPECT_NEAR(costs.mem_f_GB[s] + costs.mem_b_GB[s] + costs.mem_w_GB[s], 0, 1e-15);
}

// Multi-head latent attention (b = 2, s = 512, h = 1024, 8 heads, T = 1024 tokens): down to a
// 256-wide Q latent and a 128-wide KV latent plus a 32-wide RoPE key, up to queries and keys of
// 64 + 32 and values of 64 per head, scores over 96 and values over 64.
TEST(CostModel, LatentAttentionCostsItsProjectionsAndHeadWidths) {
  nlohmann::json scenario = tiny_scenario();
  scenario["model"].update({{"head_dim", 64}, {"rope_head_dim", 32}, {"v_head_dim", 64}, {"q_lora_rank", 256},
                            {"kv_lora_rank", 128}});
  const ModelSetup setup = model_setup_from_json(scenario, "tiny-mla", ".", catalog::read_preset_file);
  const double T = 1024, s = 512, h = 1024;
  const double q = 8 * 96, o = 8 * 64;
  const double projections = h * (256 + 128 + 32) + 256 * q + 128 * 8 * (64 + 64) + o * h;
  EXPECT_DOUBLE_EQ(setup.model.layer_gemm_params(), projections + 8 * h * h);
  EXPECT_DOUBLE_EQ(layer_costs(setup).flops_f, 2 * T * (projections + 8 * h * h) + 2 * T * s * (q + o));
  // B repeats the GEMMs for the input gradients and the scores (dP, dV, dQ, dK); W the weights'.
  EXPECT_DOUBLE_EQ(layer_costs(setup).flops_b, 2 * T * (projections + 8 * h * h) + 4 * T * s * (q + o));
  EXPECT_DOUBLE_EQ(layer_costs(setup).flops_w, 2 * T * (projections + 8 * h * h));
  scenario["model"]["kv_heads"] = 4;
  EXPECT_THROW(model_setup_from_json(scenario, "tiny-mla", ".", catalog::read_preset_file), InputError);
}

// A MoE model's leading dense layers (DeepSeek-V3's first 3): one layer per stage, the first two
// dense MLPs of 4h, the last two mixtures of 4 experts of 512 (2 per token).
TEST(CostModel, LeadingDenseLayersOfAMixtureOfExperts) {
  nlohmann::json scenario = tiny_scenario();
  scenario["model"].update({{"moe_experts", 4}, {"moe_topk", 2}, {"moe_ffn_hidden", 512}, {"moe_dense_layers", 2}});
  const ModelSetup setup = model_setup_from_json(scenario, "tiny-moe", ".", catalog::read_preset_file);
  const StageCosts costs = stage_costs(setup, shape(4), "tiny-moe");
  const PieceCosts dense = layer_costs(dense_layer_setup(setup)), moe = layer_costs(setup);
  const double flops_per_ms = 100e12 * 0.5 / 1e3;
  EXPECT_NE(dense.flops_f, moe.flops_f);
  EXPECT_DOUBLE_EQ(costs.t_b_ms[1], dense.flops_b / flops_per_ms);
  EXPECT_DOUBLE_EQ(costs.t_b_ms[2], moe.flops_b / flops_per_ms);
  EXPECT_DOUBLE_EQ(costs.params[1], setup.model.dense_layer_model().layer_params());
  EXPECT_DOUBLE_EQ(costs.params[2], setup.model.layer_params());
  EXPECT_DOUBLE_EQ(setup.model.total_params(), 2 * costs.params[1] + 2 * costs.params[2] +
                                                   setup.model.embedding_params() + 2.0 * 1024);  // final LayerNorm; tied output
  scenario["model"]["moe_dense_layers"] = 4;
  EXPECT_THROW(model_setup_from_json(scenario, "tiny-moe", ".", catalog::read_preset_file), InputError);
}

// Routing imbalance: the busiest GPU of the expert group receives 1.5 times its share, and the
// stage waits for it: its grouped GEMMs (F: 2 x received x 3 h fe), the all-to-all it receives and
// the routed activations it keeps grow by half; the router and the attention do not.
TEST(CostModel, RoutingImbalanceLoadsTheBusiestExpertGpu) {
  nlohmann::json scenario = tiny_scenario();
  scenario["model"].update({{"moe_experts", 4}, {"moe_topk", 2}, {"moe_ffn_hidden", 512}, {"mlp", "swiglu"}});
  scenario["data_parallel"] = 4;
  scenario["expert_parallel"] = 4;
  const ModelSetup balanced = model_setup_from_json(scenario, "tiny-moe", ".", catalog::read_preset_file);
  scenario["moe_imbalance"] = 1.5;
  const ModelSetup skewed = model_setup_from_json(scenario, "tiny-moe", ".", catalog::read_preset_file);
  const PieceCosts even = layer_costs(balanced), busy = layer_costs(skewed);
  const double routed = 2 * 512 * 2, h = 1024, fe = 512;  // b s tokens x top-2
  EXPECT_DOUBLE_EQ(busy.flops_f - even.flops_f, 0.5 * routed * 2 * 3 * h * fe);
  EXPECT_NEAR(busy.t_a2a_ms, 1.5 * even.t_a2a_ms, 0.5 * even.t_a2a_ms);  // latency does not grow
  EXPECT_GT(busy.t_a2a_ms, even.t_a2a_ms);
  EXPECT_DOUBLE_EQ(busy.act_b_bytes - even.act_b_bytes, 0.5 * routed * (2 * h + 8 * fe));
  scenario["moe_imbalance"] = 0.5;
  EXPECT_THROW(model_setup_from_json(scenario, "tiny-moe", ".", catalog::read_preset_file), InputError);
  nlohmann::json dense = tiny_scenario();
  dense["moe_imbalance"] = 1.2;
  EXPECT_THROW(model_setup_from_json(dense, "tiny", ".", catalog::read_preset_file), InputError);
}

// Megatron's recompute modules on an MLA MoE layer (b = 2, s = 512, T = 1024, h = 1024, 8 heads of
// 64 + 32 / 64, latents 256 and 128, 4 SwiGLU experts of 512, 2 per token): each drops its outputs
// from M_B and reruns its forward in B, which model flops do not count.
TEST(CostModel, RecomputeModulesDropTheirOutputsAndRerunInB) {
  nlohmann::json scenario = tiny_scenario();
  scenario["model"].update({{"head_dim", 64}, {"rope_head_dim", 32}, {"v_head_dim", 64}, {"q_lora_rank", 256},
                            {"kv_lora_rank", 128}, {"moe_experts", 4}, {"moe_topk", 2}, {"moe_ffn_hidden", 512},
                            {"mlp", "swiglu"}, {"positions", "rope"}});
  const auto costs = [&](const nlohmann::json& modules) {
    nlohmann::json s = scenario;
    if (!modules.is_null()) {
      s["recompute"] = "selective";
      s["recompute_modules"] = modules;
    }
    return layer_costs(model_setup_from_json(s, "tiny-mla-moe", ".", catalog::read_preset_file));
  };
  const PieceCosts none = costs(nullptr);
  const double T = 1024, h = 1024, q = 8 * 96, k = 8 * 96, v = 8 * 64, routed = 1024 * 2, fe = 512;
  const PieceCosts norms = costs({"layernorm"}), up = costs({"mla_up_proj"}), act = costs({"moe_act"});
  EXPECT_DOUBLE_EQ(none.act_b_bytes - norms.act_b_bytes, T * (2 * 2 * h + 2 * (256 + 128)));
  EXPECT_DOUBLE_EQ(none.act_b_bytes - up.act_b_bytes, T * (2 * q + 2 * (k + v)));
  EXPECT_DOUBLE_EQ(none.act_b_bytes - act.act_b_bytes, routed * 4 * fe);
  // The up-projections' GEMMs again in B (flat 50% of 100 TFLOPS here): not model flops.
  EXPECT_DOUBLE_EQ(up.flops_b, none.flops_b);
  EXPECT_NEAR(up.t_b_ms - none.t_b_ms, 2 * T * (256 * q + 128 * 8 * 128) / (100e12 * 0.5 / 1e3), 1e-12);
  EXPECT_DOUBLE_EQ(costs({"layernorm", "mla_up_proj", "moe_act"}).act_b_bytes,
                   none.act_b_bytes - 3 * none.act_b_bytes + norms.act_b_bytes + up.act_b_bytes + act.act_b_bytes);
  scenario["recompute_modules"] = {"layernorm"};
  EXPECT_THROW(model_setup_from_json(scenario, "t", ".", catalog::read_preset_file), InputError);  // not selective
  scenario["recompute"] = "selective";
  scenario["recompute_modules"] = {"mlp"};
  EXPECT_THROW(model_setup_from_json(scenario, "t", ".", catalog::read_preset_file), InputError);
}

TEST(CostModel, TransfersCrossNvlinkInsideANodeAndTheNicBetweenNodes) {
  const ModelSetup setup = model_setup_from_json(tiny_scenario(), "tiny", ".", catalog::read_preset_file);
  const StageCosts costs = stage_costs(setup, shape(4), "tiny");
  EXPECT_DOUBLE_EQ(costs.bytes_act, 2.0 * 2 * 512 * 1024);  // 16-bit b x s x h
  const double intra = 0.002 + 2097152 / 100e9 * 1e3;       // ms
  const double inter = 0.010 + 2097152 / 10e9 * 1e3;
  ASSERT_EQ(costs.t_comm_ms.size(), 4u);
  EXPECT_DOUBLE_EQ(costs.t_comm_ms[0], intra);  // d0 -> d1, node 0
  EXPECT_DOUBLE_EQ(costs.t_comm_ms[1], inter);  // d1 (node 0) -> d2 (node 1)
  EXPECT_DOUBLE_EQ(costs.t_comm_ms[2], intra);
  EXPECT_DOUBLE_EQ(costs.t_comm_ms[3], inter);  // wrap-around d3 -> d0 (interleaved placements)
}

TEST(CostModel, ApplyFillsPerDeviceArraysAndTheAutoMemoryLimit) {
  const ModelSetup setup = model_setup_from_json(tiny_scenario(), "tiny", ".", catalog::read_preset_file);
  ProblemSpec spec;
  spec.devices = 4;
  spec.microbatches = 8;
  catalog::apply_model_costs(setup, spec, {}, "tiny");
  const StageCosts costs = stage_costs(setup, shape(4), "tiny");
  EXPECT_EQ(spec.t_f, costs.t_f_ms);
  EXPECT_EQ(spec.t_comm, costs.t_comm_ms);
  EXPECT_EQ(spec.time_unit, TimeUnit::ms);
  ASSERT_TRUE(spec.mem_limit.has_value());
  EXPECT_FALSE(spec.mem_limit->times_p);
  // 16 bytes per parameter; the last device holds a layer, the final norm and the tied output layer.
  const double last_static = (setup.model.layer_params() + setup.model.output_params()) * 16e-9;
  EXPECT_DOUBLE_EQ(costs.static_GB[3], last_static);
  double most = 0;
  for (double g : costs.static_GB) most = std::max(most, g);
  EXPECT_DOUBLE_EQ(spec.mem_limit->value, 80 - most);
  const Problem problem = spec.build("tiny");
  EXPECT_EQ(problem.stages(), 4);
}

TEST(CostModel, ExplicitFieldsWin) {
  const ModelSetup setup = model_setup_from_json(tiny_scenario(), "tiny", ".", catalog::read_preset_file);
  ProblemSpec spec;
  spec.devices = 2;
  spec.microbatches = 4;
  spec.t_w = {0.25};
  spec.mem_limit = MemoryLimit{2, true};
  catalog::apply_model_costs(setup, spec, {"t_w", "mem_limit"}, "tiny");
  EXPECT_EQ(spec.t_w, (std::vector<double>{0.25}));
  EXPECT_TRUE(spec.mem_limit->times_p);
  EXPECT_EQ(spec.t_f.size(), 2u);  // the output layer makes the last device heavier
}

TEST(CostModel, EqualDevicesGiveScalars) {
  nlohmann::json scenario = tiny_scenario();
  scenario["model"]["vocab"] = 1;  // make the output layer negligible but not zero
  const ModelSetup setup = model_setup_from_json(scenario, "tiny", ".", catalog::read_preset_file);
  ProblemSpec spec;
  spec.devices = 2;
  spec.microbatches = 4;
  catalog::apply_model_costs(setup, spec, {"t_comm"}, "tiny");
  EXPECT_EQ(spec.t_comm, (std::vector<double>{0.0}));  // untouched default
  EXPECT_EQ(spec.t_f.size(), 2u);
}

TEST(CostModel, InterleavedChunksGivePerStageArrays) {
  const ModelSetup setup = model_setup_from_json(tiny_scenario(), "tiny", ".", catalog::read_preset_file);
  ProblemSpec spec;
  spec.devices = 2;
  spec.chunks = 2;
  spec.microbatches = 4;
  catalog::apply_model_costs(setup, spec, {}, "tiny");
  EXPECT_EQ(spec.t_f.size(), 4u);
  const Problem problem = spec.build("tiny");
  // Stage 3 (device 1, chunk 1) holds the output layer.
  EXPECT_GT(problem.t_f[3], problem.t_f[2]);
}

TEST(StageSplit, PaperSplitGivesTheEndsOneLayerFewer) {
  EXPECT_EQ(split_layers(22, 8, Split{Split::Kind::paper, {}}, "t"), (std::vector<int>{2, 3, 3, 3, 3, 3, 3, 2}));
  EXPECT_EQ(split_layers(30, 8, Split{Split::Kind::paper, {}}, "t"), (std::vector<int>{3, 4, 4, 4, 4, 4, 4, 3}));
  EXPECT_EQ(split_layers(62, 32, Split{Split::Kind::paper, {}}, "t"), std::vector<int>(
      {1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1}));
  EXPECT_EQ(split_layers(11, 4, Split{Split::Kind::paper, {}}, "t"), (std::vector<int>{2, 4, 3, 2}));
  EXPECT_EQ(split_layers(10, 4, Split{}, "t"), (std::vector<int>{3, 3, 2, 2}));
  EXPECT_EQ(split_layers(5, 1, Split{Split::Kind::paper, {}}, "t"), (std::vector<int>{5}));
  // Two chunks per device of the paper's 1.5B (22 layers, p = 8) and 28.3B (62, p = 32): the end
  // stages keep only the embedding and the output layer.
  EXPECT_EQ(split_layers(22, 16, Split{Split::Kind::paper, {}}, "t"),
            (std::vector<int>{0, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 0}));
  std::vector<int> one_each(64, 1);
  one_each.front() = one_each.back() = 0;
  EXPECT_EQ(split_layers(62, 64, Split{Split::Kind::paper, {}}, "t"), one_each);
  EXPECT_THROW(split_layers(61, 64, Split{Split::Kind::paper, {}}, "t"), SetupInfeasible);
}

TEST(StageSplit, ImpossibleSplitsAreInfeasibleWithAReason) {
  EXPECT_THROW(split_layers(4, 8, Split{}, "t"), SetupInfeasible);
  EXPECT_THROW(split_layers(4, 2, Split{Split::Kind::list, {1, 2}}, "t"), SetupInfeasible);
  try {
    split_layers(4, 8, Split{}, "grid.json point 3");
    FAIL();
  } catch (const SetupInfeasible& e) {
    EXPECT_STREQ(e.what(), "grid.json point 3: 4 layers cannot fill 8 stages");
  }
}

TEST(CostModel, TooFewGpusOrTooLittleMemoryIsInfeasible) {
  nlohmann::json scenario = tiny_scenario();
  scenario["cluster"] = nlohmann::json::parse(R"({"nodes": 1, "gpus_per_node": 2,
      "intra_node": {"bandwidth_GBps": 100, "latency_us": 1}})");
  const ModelSetup small = model_setup_from_json(scenario, "tiny", ".", catalog::read_preset_file);
  EXPECT_THROW(stage_costs(small, shape(4), "tiny"), SetupInfeasible);

  nlohmann::json big = tiny_scenario();
  big["model"] = nlohmann::json::parse(R"({"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8,
      "ffn_hidden": 28672, "vocab": 32000, "seq_len": 4096, "mlp": "swiglu"})");
  const ModelSetup setup = model_setup_from_json(big, "big", ".", catalog::read_preset_file);
  ProblemSpec spec;
  spec.devices = 2;
  spec.microbatches = 4;
  try {
    catalog::apply_model_costs(setup, spec, {}, "big");
    FAIL();
  } catch (const SetupInfeasible& e) {
    EXPECT_NE(std::string(e.what()).find("before any activation"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace zb::models
