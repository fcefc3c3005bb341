// One layer's flops and activation bytes against values computed by hand from the formulas.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/support/error.h"
#include "models/detail/kernel_time.h"
#include "models/detail/layer_costs.h"
#include "models/static_memory.h"
#include "models/transformer.h"

namespace zb::models {
namespace {

// An A100 SXM as its datasheet gives it (312 TFLOPS, 2039 GB/s, 108 SMs), 8 GPUs on 300 GB/s links.
HardwareSpec a100() {
  HardwareSpec gpu;
  gpu.peak_tflops_bf16 = 312;
  gpu.memory_bandwidth_GBps = 2039;
  gpu.sm_count = 108;
  gpu.memory_GB = 80;
  gpu.nvlink = {300, 3};
  gpu.nic = {25, 10};
  return gpu;
}

ModelSetup setup_of(const TransformerSpec& model, int microbatch_size, bool flash, Parallelism parallel = {}) {
  ModelSetup setup;
  setup.model = model;
  setup.hardware = a100();
  setup.interconnect = interconnect_from_hardware(setup.hardware);
  setup.microbatch_size = microbatch_size;
  setup.flash_attention = flash;
  setup.parallel = parallel;
  return setup;
}

PieceCosts layer_costs(const TransformerSpec& model, int microbatch_size, bool flash, Parallelism parallel = {}) {
  return models::layer_costs(setup_of(model, microbatch_size, flash, parallel));
}

TransformerSpec gpt_1_5b() {
  return transformer_from_json(nlohmann::json::parse(R"({"layers": 22, "hidden": 2304, "heads": 24, "vocab": 50304,
      "seq_len": 1024})"), "test");
}

TransformerSpec llama2_70b() {
  return transformer_from_json(nlohmann::json::parse(R"({"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8,
      "ffn_hidden": 28672, "vocab": 32000, "seq_len": 4096, "mlp": "swiglu", "norm": "rmsnorm", "bias": false,
      "dropout": false, "positions": "rope", "tied_embeddings": false})"), "test");
}

// The paper's counts for b = 6, s = 1024, h = 2304, a = 24:
// F = bsh(24h + 4s) = 6*1024*2304*59392, B = bsh(24h + 8s), W = 24bsh^2,
// M_B = bs(34h + 5as) = 6144 * 201216, M_W = 32bsh.
TEST(LayerCosts, GptLayerMatchesThePapersCounts) {
  const PieceCosts c = layer_costs(gpt_1_5b(), 6, false);
  EXPECT_DOUBLE_EQ(c.flops_f, 840739848192.0);
  EXPECT_DOUBLE_EQ(c.flops_b, 898721906688.0);
  EXPECT_DOUBLE_EQ(c.flops_w, 782757789696.0);
  EXPECT_DOUBLE_EQ(c.act_b_bytes, 1236271104.0);
  EXPECT_DOUBLE_EQ(c.act_w_bytes, 452984832.0);
}

// Llama-2 70B, b = 1, s = 4096: GEMM parameters 2h^2 (Q, O) + 2h*1024 (K, V with 8 of 64 heads)
// + 3hf (SwiGLU) = 855638016; F = 2s*855638016 + 4s^2h; B adds another 4s^2h; W = 2s*855638016.
// M_B per token: 12h + 4*1024 + 2as (no dropout) + 8f = 856064 bytes;
// M_W per token: GEMM inputs 6h + 2f, output gradients 2(h + 2048) + 2h + 4f + 2h = 274432 bytes.
TEST(LayerCosts, LlamaLayerUsesGqaAndSwiglu) {
  const TransformerSpec model = llama2_70b();
  EXPECT_DOUBLE_EQ(model.layer_gemm_params(), 855638016.0);
  const PieceCosts c = layer_costs(model, 1, false);
  EXPECT_DOUBLE_EQ(c.flops_f, 7559142440960.0);
  EXPECT_DOUBLE_EQ(c.flops_b, 8108898254848.0);
  EXPECT_DOUBLE_EQ(c.flops_w, 7009386627072.0);
  EXPECT_DOUBLE_EQ(c.act_b_bytes, 4096.0 * 856064);
  EXPECT_DOUBLE_EQ(c.act_w_bytes, 1124073472.0);
}

TEST(LayerCosts, FlashAttentionDropsTheScoreTensors) {
  const TransformerSpec model = llama2_70b();
  const PieceCosts with = layer_costs(model, 1, false);
  const PieceCosts flash = layer_costs(model, 1, true);
  EXPECT_DOUBLE_EQ(with.act_b_bytes - flash.act_b_bytes, 2.0 * 64 * 4096 * 4096);  // 2as bytes per token
  EXPECT_DOUBLE_EQ(with.flops_f, flash.flops_f);
}

TEST(LayerCosts, CostsScaleLinearlyWithTheMicrobatchSize) {
  const PieceCosts one = layer_costs(gpt_1_5b(), 1, false);
  const PieceCosts four = layer_costs(gpt_1_5b(), 4, false);
  EXPECT_DOUBLE_EQ(four.flops_b, 4 * one.flops_b);
  EXPECT_DOUBLE_EQ(four.act_b_bytes, 4 * one.act_b_bytes);
}

// Output layer: 2bshV flops in each pass; F keeps 4bsh + 6bsV bytes, W needs 2bsh + 2bsV.
TEST(LayerCosts, OutputLayer) {
  const PieceCosts c = output_costs(setup_of(gpt_1_5b(), 2, false));
  const double tokens = 2.0 * 1024;
  EXPECT_DOUBLE_EQ(c.flops_f, 2 * tokens * 2304 * 50304);
  EXPECT_DOUBLE_EQ(c.flops_w, c.flops_f);
  EXPECT_DOUBLE_EQ(c.act_b_bytes, tokens * (4 * 2304 + 6 * 50304));
  EXPECT_DOUBLE_EQ(c.act_w_bytes, tokens * (2 * 2304 + 2 * 50304));
}

// Parameter counts of the published checkpoints (Hugging Face model cards).
TEST(Transformer, ParameterCountsMatchThePublishedModels) {
  EXPECT_DOUBLE_EQ(transformer_from_json(nlohmann::json::parse(R"({"layers": 32, "hidden": 4096, "heads": 32,
      "ffn_hidden": 11008, "vocab": 32000, "seq_len": 4096, "mlp": "swiglu", "norm": "rmsnorm", "bias": false,
      "dropout": false, "positions": "rope", "tied_embeddings": false})"), "llama2-7b").total_params(),
                   6738415616.0);
  EXPECT_DOUBLE_EQ(transformer_from_json(nlohmann::json::parse(R"({"layers": 32, "hidden": 4096, "heads": 32,
      "kv_heads": 8, "ffn_hidden": 14336, "vocab": 128256, "seq_len": 8192, "mlp": "swiglu", "norm": "rmsnorm",
      "bias": false, "dropout": false, "positions": "rope", "tied_embeddings": false})"), "llama3-8b").total_params(),
                   8030261248.0);
  // Qwen3-30B-A3B ("30.5B"): per layer attention 18874368 + router 262144 + 128 experts of 3 x 2048 x
  // 768 + two norms, 48 layers, untied embedding and output layer; Qwen3's Q and K norms (256 per
  // layer) are not counted.
  EXPECT_DOUBLE_EQ(transformer_from_json(nlohmann::json::parse(R"({"layers": 48, "hidden": 2048, "heads": 32,
      "kv_heads": 4, "head_dim": 128, "ffn_hidden": 6144, "vocab": 151936, "seq_len": 4096, "moe_experts": 128,
      "moe_topk": 8, "moe_ffn_hidden": 768, "mlp": "swiglu", "norm": "rmsnorm", "bias": false, "dropout": false,
      "positions": "rope", "tied_embeddings": false})"), "qwen3-30b-a3b").total_params(),
                   30532110336.0);
}

// A head width given apart from h / a (Qwen3: 64 heads of 128 on h = 4096, 4 KV heads): Q and the
// output projection are h x a d, and attention's flops follow a d, not h.
TEST(Transformer, HeadDimGivenApartFromTheHiddenSize) {
  const TransformerSpec qwen = transformer_from_json(nlohmann::json::parse(R"({"layers": 94, "hidden": 4096,
      "heads": 64, "kv_heads": 4, "head_dim": 128, "ffn_hidden": 12288, "vocab": 151936, "seq_len": 4096,
      "mlp": "swiglu", "norm": "rmsnorm", "bias": false, "dropout": false, "positions": "rope",
      "tied_embeddings": false})"), "test");
  const double h = 4096, q = 8192, kv = 512, f = 12288, T = 4096;
  EXPECT_EQ(qwen.q_hidden(), q);
  EXPECT_EQ(qwen.k_hidden(), kv);
  EXPECT_EQ(qwen.v_hidden(), kv);
  EXPECT_EQ(qwen.o_hidden(), q);
  EXPECT_DOUBLE_EQ(qwen.layer_gemm_params(), 2 * h * q + 2 * h * kv + 3 * h * f);
  const PieceCosts layer = layer_costs(qwen, 1, true);
  EXPECT_DOUBLE_EQ(layer.flops_f, 2 * T * h * (q + 2 * kv) + 4 * T * T * q + 2 * T * q * h + 2 * T * h * 3 * f);
}

// Sliding-window attention (GPT-OSS: 128 tokens in alternate layers): the fused kernel computes
// (w + 128) / s of the score tiles in a windowed layer instead of the causal half, and the model
// flops count w keys per query there instead of s; the GEMMs and the kernel's bytes are unchanged.
TEST(Transformer, SlidingWindowShortensTheFusedAttentionOnly) {
  const char* base = R"({"layers": 36, "hidden": 2880, "heads": 64, "kv_heads": 8, "head_dim": 64,
      "ffn_hidden": 2880, "vocab": 201088, "seq_len": 4096, "mlp": "swiglu", "norm": "rmsnorm", "bias": true,
      "dropout": false, "positions": "rope", "tied_embeddings": false)";
  const TransformerSpec full = transformer_from_json(nlohmann::json::parse(std::string(base) + "}"), "test");
  const TransformerSpec alternate = transformer_from_json(
      nlohmann::json::parse(std::string(base) + R"(, "sliding_window": 128, "sliding_window_share": 0.5})"), "test");
  const TransformerSpec every = transformer_from_json(
      nlohmann::json::parse(std::string(base) + R"(, "sliding_window": 128})"), "test");
  EXPECT_EQ(every.sliding_window_share, 1.0);
  const double T = 4096, q = 4096, w = 128;
  const PieceCosts f = layer_costs(full, 1, true), a = layer_costs(alternate, 1, true), e = layer_costs(every, 1, true);
  EXPECT_DOUBLE_EQ(f.flops_f - a.flops_f, 0.5 * 4 * T * (T - w) * q);
  EXPECT_DOUBLE_EQ(f.flops_f - e.flops_f, 4 * T * (T - w) * q);
  EXPECT_DOUBLE_EQ(f.flops_w, e.flops_w);
  EXPECT_LT(e.t_f_ms, a.t_f_ms);
  EXPECT_LT(a.t_f_ms, f.t_f_ms);
  EXPECT_LT(a.t_b_ms, f.t_b_ms);
  EXPECT_DOUBLE_EQ(a.t_w_ms, f.t_w_ms);
  // Without flash attention the scores are materialised whole and masked: no saving.
  EXPECT_DOUBLE_EQ(layer_costs(alternate, 1, false).t_f_ms, layer_costs(full, 1, false).t_f_ms);
  // A window of the whole sequence is the causal mask.
  const TransformerSpec wide = transformer_from_json(
      nlohmann::json::parse(std::string(base) + R"(, "sliding_window": 8192})"), "test");
  EXPECT_DOUBLE_EQ(layer_costs(wide, 1, true).t_f_ms, f.t_f_ms);
  try {
    transformer_from_json(nlohmann::json::parse(std::string(base) + R"(, "sliding_window_share": 0.5})"), "my.json");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_STREQ(error.what(), "my.json: field 'sliding_window_share' needs sliding_window");
  }
  EXPECT_THROW(transformer_from_json(nlohmann::json::parse(std::string(base) +
                                                           R"(, "sliding_window": 128, "sliding_window_share": 0})"),
                                     "my.json"),
               InputError);
}

TEST(Transformer, BadFieldsNameSourceFieldAndValue) {
  try {
    transformer_from_json(nlohmann::json::parse(R"({"layers": 2, "hidden": 100, "heads": 3, "vocab": 10,
        "seq_len": 8})"), "my.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "my.json: field 'heads' is 3: it must divide hidden (100), or give head_dim");
  }
  try {
    transformer_from_json(nlohmann::json::parse(R"({"layers": 2, "hidden": 96, "heads": 3, "vocab": 10,
        "seq_len": 8, "mlp": "relu"})"), "my.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "my.json: field 'mlp' is \"relu\": expected gelu or swiglu");
  }
  EXPECT_THROW(transformer_from_json(nlohmann::json::parse(R"({"layers": 2, "hidden": 96, "heads": 3, "vocab": 10,
        "seq_len": 8, "layer": 3})"), "my.json"), InputError);
}

TransformerSpec qwen3_30b() {
  return transformer_from_json(nlohmann::json::parse(R"({"layers": 48, "hidden": 2048, "heads": 32, "kv_heads": 4,
      "head_dim": 128, "ffn_hidden": 6144, "vocab": 151936, "seq_len": 4096, "moe_experts": 128, "moe_topk": 8,
      "moe_ffn_hidden": 768, "mlp": "swiglu", "norm": "rmsnorm", "bias": false, "dropout": false, "positions": "rope",
      "tied_embeddings": false})"), "test");
}

// An all-to-all over 32 GPUs, 4 per node, of 64 MB per GPU: 3/32 of it over NVLink, 28/32 over
// the NIC, at once; inside one node, 31/32 over NVLink.
TEST(KernelTime, AllToAllTakesTheSlowerOfNvlinkAndTheNic) {
  const HardwareSpec gpu = a100();
  const Link nvlink{300, 3}, nic{25, 10};
  const double bytes = 64e6;
  EXPECT_DOUBLE_EQ(all_to_all_ms(gpu, nvlink, nic, 32, 4, bytes), 0.010 + 28.0 / 32 * bytes / 25e6);
  EXPECT_DOUBLE_EQ(all_to_all_ms(gpu, nvlink, nic, 8, 8, bytes), 0.003 + 7.0 / 8 * bytes / 300e6);
  EXPECT_DOUBLE_EQ(all_to_all_ms(gpu, nvlink, nic, 1, 8, bytes), 0);
}

// A MoE layer (Qwen3-30B-A3B: 128 experts of 768, 8 per token): the MLP's flops are each token's
// 8 experts' (6 h fe per copy) and the router's (2 h E); F and B each run two all-to-alls of the
// routed copies (T k h 2 bytes per GPU) on the expert group's links.
TEST(LayerCosts, MixtureOfExpertsRoutesTopKCopiesThroughTwoAllToAlls) {
  const TransformerSpec qwen = qwen3_30b();
  const double T = 4096, h = 2048, q = 4096, kv = 512, k = 8, fe = 768, E = 128;
  ModelSetup setup = setup_of(qwen, 1, true, {.data = 8, .expert = 8});
  const PieceCosts layer = models::layer_costs(setup);
  const double attention = 2 * T * h * (q + 2 * kv) + 4 * T * T * q + 2 * T * q * h;
  EXPECT_DOUBLE_EQ(layer.flops_f, attention + 2 * T * h * E + 6 * T * k * h * fe);
  EXPECT_DOUBLE_EQ(layer.flops_w, 2 * T * h * (q + 2 * kv) + 2 * T * q * h + 2 * T * h * E + 6 * T * k * h * fe);
  // The same layer on a 1 GB/s NVLink: only the all-to-alls change (8 GPUs of a node).
  ModelSetup slow = setup;
  slow.interconnect.intra_node.bandwidth_GBps = 1;
  const PieceCosts waiting = models::layer_costs(slow);
  const double bytes = T * k * h * 2;
  const double a2a = [&](const Link& link) { return all_to_all_ms(setup.hardware, link, link, 8, 8, bytes); }
      (slow.interconnect.intra_node) - all_to_all_ms(setup.hardware, setup.interconnect.intra_node,
                                                     setup.interconnect.intra_node, 8, 8, bytes);
  EXPECT_NEAR(waiting.t_f_ms - layer.t_f_ms, 2 * a2a, 1e-9);
  EXPECT_NEAR(waiting.t_b_ms - layer.t_b_ms, 2 * a2a, 1e-9);
  EXPECT_DOUBLE_EQ(waiting.t_w_ms, layer.t_w_ms);
  // Activations grow with the routed copies: permuted input (2h) and the SwiGLU tensors (8 fe).
  EXPECT_GT(layer.act_b_bytes, T * k * (2 * h + 8 * fe));
}

// Experts split over expert parallelism, whole on each GPU (no tensor split); their optimizer state
// shards over the GPUs that hold the same experts, t c d / e of them.
TEST(StaticMemory, ExpertsSplitOverExpertParallelismAndShardOverTheirReplicas) {
  const TransformerSpec qwen = qwen3_30b();
  const double experts = 128 * 3 * 2048.0 * 768, router = 2048.0 * 128;
  const double attention = 2 * 2048.0 * 4096 + 2 * 2048.0 * 512, norms = 2 * 2048.0;
  EXPECT_DOUBLE_EQ(qwen.expert_params(), experts);
  ModelSetup setup = setup_of(qwen, 1, true, {.tensor = 2, .sequence_parallel = true, .data = 16, .expert = 32});
  EXPECT_DOUBLE_EQ(layer_expert_params_per_gpu(setup), experts / 32);
  EXPECT_DOUBLE_EQ(layer_params_per_gpu(setup), (attention + router) / 2 + norms + experts / 32);
  setup.parallel.sharding = Sharding::zero1;
  const double P = 1e9, expert_P = 6e8;  // of which experts
  const StaticMemory m = static_memory(setup, P, 0, expert_P);
  EXPECT_DOUBLE_EQ(m.optimizer_GB, 12 * (4e8 / 16 + 6e8 / 1) * 1e-9);  // 2 x 16 / 32 = 1 GPU holds each expert
  EXPECT_DOUBLE_EQ(m.parameters_GB, 2.0);
}

}  // namespace
}  // namespace zb::models

namespace zb::models {
namespace {

// The roofline of one GEMM on the A100 above: 312e12 * 0.8 / 108 = 2.3111e12 flop/s per SM.
// 1536 x 1152 is 12 x 9 = 108 tiles of 128 x 128: one full wave, K = 8192 a whole number of
// steps, so the GEMM runs at exactly the sustained fraction (0.8) of the peak:
// 2 * 1536 * 1152 * 8192 flops / (312e12 * 0.8) = 0.116150 ms; its bytes
// (1536*8192 + 8192*1152 + 1536*1152) * 2 = 47.6 MB take 0.0259 ms at 2039 * 0.9 GB/s: compute-bound.
TEST(KernelTime, AFullWaveOfWholeTilesRunsAtTheSustainedFraction) {
  const HardwareSpec gpu = a100();
  const GemmShape whole{1536, 1152, 8192};
  EXPECT_DOUBLE_EQ(gemm_ms(gpu, whole), 2.0 * 1536 * 1152 * 8192 / (312e9 * 0.8));
  EXPECT_NEAR(gemm_ms(gpu, whole), 0.116150, 1e-6);
  EXPECT_NEAR(gemm_efficiency(gpu, whole), 0.8, 1e-12);
  // One row more: 13 x 9 = 117 tiles of 128 x 128 need two waves (or 7 x 9 tiles of 256 x 128 in
  // one wave of twice the work): twice the time for 1537/1536 of the flops.
  const GemmShape ragged{1537, 1152, 8192};
  EXPECT_DOUBLE_EQ(gemm_ms(gpu, ragged), 2 * gemm_ms(gpu, whole));
  EXPECT_NEAR(gemm_efficiency(gpu, ragged), 0.8 / 2 * 1537 / 1536, 1e-12);
  // K = 8193 pads to 8256 (129 steps of 64): 129/128 of the time.
  EXPECT_DOUBLE_EQ(gemm_ms(gpu, {1536, 1152, 8193}), gemm_ms(gpu, whole) * 8256 / 8192);
}

// A skinny GEMM is memory-bound: 65536 x 64 x 64 moves (65536*64 + 64*64 + 65536*64) * 2 bytes
// = 16.79 MB, 0.009147 ms at 2039 * 0.9 GB/s, twice its tensor-core time (5 waves of 512 tiles of
// 128 x 128 x 64: 0.00454 ms).
TEST(KernelTime, SkinnyGemmsAndElementwisePassesRunAtMemoryBandwidth) {
  const HardwareSpec gpu = a100();
  const double bytes = (65536.0 * 64 + 64 * 64 + 65536.0 * 64) * 2;
  EXPECT_DOUBLE_EQ(gemm_ms(gpu, {65536, 64, 64}), bytes / (2039e6 * 0.9));
  EXPECT_NEAR(gemm_ms(gpu, {65536, 64, 64}), 0.009147, 1e-6);
  EXPECT_NEAR(tensor_core_ms(gpu, {65536, 64, 64}, 0.8), 5 * 2.0 * 128 * 128 * 64 / (312e9 * 0.8 / 108), 1e-15);
  EXPECT_DOUBLE_EQ(memory_pass_ms(gpu, 1e9), 1e9 / (2039e6 * 0.9));  // 0.545 ms per GB
}

// A GEMM with a dimension that is not a whole number of 16-byte vectors (8 16-bit elements, 16
// FP8 ones) runs at the GPU's misaligned_gemm_fraction of the aligned rate; padding K to the tile
// is unchanged (225 and 232 both take four K steps of 64).
TEST(KernelTime, MisalignedDimensionsRunAtTheMisalignedFraction) {
  HardwareSpec gpu = a100();
  gpu.peak_tflops_fp8 = 2 * gpu.peak_tflops_bf16;
  gpu.efficiency.misaligned_gemm_fraction = 0.25;
  EXPECT_DOUBLE_EQ(tensor_core_ms(gpu, {4096, 4096, 225}, 0.8), 4 * tensor_core_ms(gpu, {4096, 4096, 232}, 0.8));
  EXPECT_DOUBLE_EQ(tensor_core_ms(gpu, {4096, 228, 4096}, 0.8), 4 * tensor_core_ms(gpu, {4096, 232, 4096}, 0.8));
  GemmShape fp8{4096, 4096, 232};  // 8-aligned, not 16
  fp8.fp8 = true;
  GemmShape fp8_aligned{4096, 4096, 240};
  fp8_aligned.fp8 = true;
  EXPECT_DOUBLE_EQ(tensor_core_ms(gpu, fp8, 0.8), 4 * tensor_core_ms(gpu, fp8_aligned, 0.8));
  gpu.efficiency.misaligned_gemm_fraction = 1;  // the roofline
  EXPECT_DOUBLE_EQ(tensor_core_ms(gpu, {4096, 4096, 225}, 0.8), tensor_core_ms(gpu, {4096, 4096, 232}, 0.8));
}

// Ring all-reduce over 8 GPUs of 2 * 6 * 1024 * 1600 = 19.66 MB on 300 GB/s + 3 us links:
// 2 * 7 steps of latency (0.042 ms) + 2 * 7/8 of the bytes / 300 GB/s (0.114688 ms).
// A collective efficiency of 0.75 leaves the latency and stretches the bandwidth term by 4/3.
TEST(KernelTime, RingCollectives) {
  const Link link{300, 3};
  HardwareSpec gpu;
  const double bytes = 2.0 * 6 * 1024 * 1600;
  EXPECT_DOUBLE_EQ(all_reduce_ms(gpu, link, 8, bytes), 14 * 0.003 + 2 * 7.0 / 8 * bytes / 300e6);
  EXPECT_DOUBLE_EQ(reduce_scatter_ms(gpu, link, 8, bytes), 7 * 0.003 + 7.0 / 8 * bytes / 300e6);
  EXPECT_EQ(all_reduce_ms(gpu, link, 1, bytes), 0);
  gpu.efficiency.collective_efficiency = 0.75;
  EXPECT_DOUBLE_EQ(reduce_scatter_ms(gpu, link, 8, bytes), 7 * 0.003 + 7.0 / 8 * bytes / 225e6);
}

// Korthikanti et al.'s activation memory per layer for GPT (f = 4h, dropout, no GQA), Table 2:
// tensor parallel alone sbh(10 + 24/t + 5as/(ht)), with sequence parallelism sbh(34/t + 5as/(ht)),
// full recomputation 2sbh (2sbh/t with sequence parallelism), selective sbh(34/t) with it.
TEST(LayerCosts, TensorAndSequenceParallelActivationsFollowKorthikanti) {
  const TransformerSpec model = gpt_1_5b();
  const double s = 1024, b = 6, h = 2304, a = 24, t = 4;
  const double sbh = s * b * h;
  Parallelism tp;
  tp.tensor = 4;
  EXPECT_DOUBLE_EQ(layer_costs(model, 6, false, tp).act_b_bytes, sbh * (10 + 24 / t + 5 * a * s / (h * t)));
  tp.sequence_parallel = true;
  EXPECT_DOUBLE_EQ(layer_costs(model, 6, false, tp).act_b_bytes, sbh * (34 / t + 5 * a * s / (h * t)));
  tp.recompute = Recompute::selective;
  EXPECT_DOUBLE_EQ(layer_costs(model, 6, false, tp).act_b_bytes, sbh * 34 / t);
  tp.recompute = Recompute::full;
  EXPECT_DOUBLE_EQ(layer_costs(model, 6, false, tp).act_b_bytes, 2 * sbh / t);
  // Flops split t ways.
  EXPECT_DOUBLE_EQ(layer_costs(model, 6, false, tp).flops_f, 840739848192.0 / 4);
}

TEST(LayerCosts, MoreTensorParallelismMeansLessMemoryAndWorkPerGpu) {
  const TransformerSpec model = llama2_70b();
  const ModelSetup one = setup_of(model, 1, true);
  double previous_act = 1e300, previous_params = 1e300, previous_f = 1e300;
  for (const int t : {1, 2, 4, 8}) {
    for (const bool sp : {false, true}) {
      Parallelism parallel;
      parallel.tensor = t;
      parallel.sequence_parallel = sp;
      const ModelSetup setup = setup_of(model, 1, true, parallel);
      const PieceCosts c = models::layer_costs(setup);
      if (!sp) {
        EXPECT_LT(c.act_b_bytes, previous_act) << t;
        EXPECT_LT(layer_params_per_gpu(setup), previous_params) << t;
        EXPECT_LT(c.t_f_ms, previous_f) << t;  // the all-reduces cost less than the GEMMs save
        previous_act = c.act_b_bytes;
        previous_params = layer_params_per_gpu(setup);
        previous_f = c.t_f_ms;
      } else if (t > 1) {
        EXPECT_LT(c.act_b_bytes, previous_act) << t;  // the norms and dropout split too
      }
    }
  }
  EXPECT_DOUBLE_EQ(layer_params_per_gpu(one), model.layer_params());
}

// Full recomputation keeps the layer input only and reruns F in B; selective (without flash
// attention) drops the score tensors and reruns the attention core; W is unchanged.
TEST(LayerCosts, RecomputationTradesActivationMemoryForBackwardTime) {
  const TransformerSpec model = gpt_1_5b();
  const PieceCosts none = layer_costs(model, 6, false);
  Parallelism selective_p;
  selective_p.recompute = Recompute::selective;
  const PieceCosts selective = layer_costs(model, 6, false, selective_p);
  Parallelism full_p;
  full_p.recompute = Recompute::full;
  const PieceCosts full = layer_costs(model, 6, false, full_p);
  EXPECT_LT(full.act_b_bytes, selective.act_b_bytes);
  EXPECT_LT(selective.act_b_bytes, none.act_b_bytes);
  EXPECT_DOUBLE_EQ(full.act_b_bytes, 2.0 * 6 * 1024 * 2304);
  EXPECT_DOUBLE_EQ(full.t_b_ms, none.t_b_ms + none.t_f_ms);
  EXPECT_GT(selective.t_b_ms, none.t_b_ms);
  EXPECT_LT(selective.t_b_ms, full.t_b_ms);
  EXPECT_DOUBLE_EQ(full.t_w_ms, none.t_w_ms);
  EXPECT_DOUBLE_EQ(full.act_w_bytes, none.act_w_bytes);
  EXPECT_DOUBLE_EQ(full.flops_b, none.flops_b);  // model flops do not count recomputation
  // Flash attention keeps no score tensors: selective recomputation changes nothing.
  const PieceCosts flash = layer_costs(model, 6, true);
  const PieceCosts flash_selective = layer_costs(model, 6, true, selective_p);
  EXPECT_DOUBLE_EQ(flash_selective.act_b_bytes, flash.act_b_bytes);
  EXPECT_DOUBLE_EQ(flash_selective.t_b_ms, flash.t_b_ms);
}

// Per-kind costs of a GPT layer: its GEMMs at their shapes plus the memory-bound passes; the
// pieces of F by hand for b = 6, s = 1024, h = 2304 (T = 6144 tokens) on the A100 above.
TEST(LayerCosts, PerKindTimesAddTheGemmsAndTheMemoryPasses) {
  const ModelSetup setup = setup_of(gpt_1_5b(), 6, false);
  const HardwareSpec& gpu = setup.hardware;
  const double T = 6144, h = 2304, s = 1024, heads = 6 * 24, d = 96;
  const double gemms = gemm_ms(gpu, {T, 3 * h, h}) + gemm_ms(gpu, {T, h, h}) + gemm_ms(gpu, {T, 4 * h, h}) +
                       gemm_ms(gpu, {T, h, 4 * h}) + gemm_ms(gpu, {s, s, d, heads}) + gemm_ms(gpu, {s, d, s, heads});
  // Bytes per token: two norms (4h each), two bias-dropout-adds (7h each), GeLU (4 * 4h), softmax
  // (4 bytes per score) and its dropout (5), a * s scores per token.
  const double bytes = T * (8 * h + 14 * h + 16 * h + 9 * 24 * s);
  EXPECT_DOUBLE_EQ(models::layer_costs(setup).t_f_ms, gemms + memory_pass_ms(gpu, bytes));
  // W is the four weight GEMMs alone, accumulated into fp32.
  const double w = gemm_ms(gpu, {h, 3 * h, T, 1, 8}) + gemm_ms(gpu, {h, h, T, 1, 8}) + gemm_ms(gpu, {h, 4 * h, T, 1, 8}) +
                   gemm_ms(gpu, {4 * h, h, T, 1, 8});
  EXPECT_DOUBLE_EQ(models::layer_costs(setup).t_w_ms, w);
}

// Static memory of P parameters at 16 bytes (2 weights, 2 gradients, 12 optimizer state) over
// d = 4 data-parallel GPUs: ZeRO-1 2P + 2P + 3P, ZeRO-2 2P + 0.5P + 3P, ZeRO-3 4P + two layers
// gathered in 16 bits.
// FP8 (Transformer Engine): the linear layers' GEMMs at the FP8 rate, here twice the 16-bit one, so
// a compute-bound GEMM takes half the time; each 16-bit operand is cast first (4 bytes per element),
// and current scaling reads it once more for its amax (2 bytes): in F, the inputs of QKV, the output
// projection, the MLP's up and down projections.
TEST(LayerCosts, Fp8RunsLinearGemmsAtTheFp8RateAfterACast) {
  HardwareSpec gpu = a100();
  gpu.peak_tflops_fp8 = 2 * gpu.peak_tflops_bf16;
  GemmShape fp8{1536, 1152, 8192};
  fp8.fp8 = true;
  EXPECT_DOUBLE_EQ(tensor_core_ms(gpu, fp8, 0.8), tensor_core_ms(gpu, {1536, 1152, 8192}, 0.8) / 2);
  ModelSetup setup = setup_of(llama2_70b(), 1, true, {.tensor = 8});
  setup.hardware = gpu;
  const PieceCosts bf16 = models::layer_costs(setup);
  setup.precision = Precision::fp8;
  const PieceCosts delayed = models::layer_costs(setup);
  setup.precision = Precision::fp8_current;
  const PieceCosts current = models::layer_costs(setup);
  EXPECT_LT(delayed.t_f_ms, 0.75 * bf16.t_f_ms);
  EXPECT_LT(delayed.t_w_ms, 0.6 * bf16.t_w_ms);  // no cast in W: its operands were cast in F and B
  EXPECT_DOUBLE_EQ(delayed.flops_f, bf16.flops_f);  // model flops do not change
  const double T = 4096, h = 8192, f = 28672, t = 8;
  const double cast_f = T * h + T * h / t + T * h + T * f / t;
  EXPECT_NEAR(current.t_f_ms - delayed.t_f_ms, memory_pass_ms(gpu, 2 * cast_f), 1e-12);
  // Row-wise scaling (torchao): current scaling's casts (6 bytes per element, one kernel each: 4 in
  // F), GEMMs at the 16-bit rate: BF16's time plus the casts; W casts nothing and equals BF16's.
  setup.precision = Precision::fp8_rowwise;
  const PieceCosts rowwise = models::layer_costs(setup);
  EXPECT_NEAR(rowwise.t_f_ms - bf16.t_f_ms,
              memory_pass_ms(gpu, 6 * cast_f) + 4 * gpu.efficiency.kernel_overhead_us * 1e-3, 1e-9);
  EXPECT_DOUBLE_EQ(rowwise.t_w_ms, bf16.t_w_ms);
}

// Context parallelism over c GPUs: each holds s/c of every token-wise tensor, so flops and
// activations halve at c = 2 (flash attention: nothing grows with s^2); the keys and values pass
// around the ring behind the attention, which waits for them when the link is slow.
TEST(LayerCosts, ContextParallelismSplitsTheSequenceAndPassesKeysAndValues) {
  const TransformerSpec model = llama2_70b();
  const PieceCosts whole = layer_costs(model, 1, true, {.tensor = 4});
  const PieceCosts halves = layer_costs(model, 1, true, {.tensor = 4, .context = 2});
  EXPECT_NEAR(halves.flops_f / whole.flops_f, 0.5, 1e-12);
  EXPECT_NEAR(halves.flops_b / whole.flops_b, 0.5, 1e-12);
  EXPECT_NEAR(halves.act_b_bytes / whole.act_b_bytes, 0.5, 1e-12);
  EXPECT_LT(halves.t_f_ms, 0.6 * whole.t_f_ms);
  // Without tensor parallelism (no collectives on the slowed link), a 1 MB/s ring decides.
  ModelSetup slow = setup_of(model, 1, true, {.context = 2});
  slow.interconnect.intra_node = {0.001, 3};
  const double kv_bytes = 4.0 * 2048 * 1024;      // 4 b (s/c) kv, kv = 8 heads x 128
  const double ring_ms = 0.003 + kv_bytes / 1e3;  // one step of the ring of 2 at 1e3 bytes per ms
  const PieceCosts waiting = models::layer_costs(slow);
  EXPECT_GT(waiting.t_f_ms, ring_ms);
  EXPECT_LT(waiting.t_f_ms, ring_ms + layer_costs(model, 1, true, {.context = 2}).t_f_ms);
  EXPECT_GT(waiting.t_b_ms, 2 * ring_ms);
}

// Flash attention runs its on-chip GEMMs at the GPU's attention fraction, apart from the GEMMs':
// the forward's two (scores, scores x values) do half their tiles under the causal mask.
TEST(LayerCosts, FlashAttentionRunsAtItsOwnSustainedFraction) {
  ModelSetup setup = setup_of(llama2_70b(), 1, true, {.tensor = 8, .sequence_parallel = true});
  setup.hardware.efficiency.attention_sustained_fraction = 0.8;
  const PieceCosts fast = models::layer_costs(setup);
  setup.hardware.efficiency.attention_sustained_fraction = 0.4;
  const PieceCosts slow = models::layer_costs(setup);
  const GemmShape scores{4096, 4096, 128, 8}, values{4096, 128, 4096, 8};  // 64 heads / t = 8 per GPU
  const double forward_at = 0.5 * (tensor_core_ms(setup.hardware, scores, 0.4) + tensor_core_ms(setup.hardware, values, 0.4));
  EXPECT_NEAR(slow.t_f_ms - fast.t_f_ms, forward_at / 2, 1e-9);  // at 0.8 it took half as long
  EXPECT_GT(slow.t_b_ms - fast.t_b_ms, 2 * (slow.t_f_ms - fast.t_f_ms));  // B: five GEMMs to F's two
  EXPECT_DOUBLE_EQ(slow.t_w_ms, fast.t_w_ms);
  EXPECT_DOUBLE_EQ(slow.flops_f, fast.flops_f);
}

// With tp_comm_overlap each sequence-parallel all-gather or reduce-scatter runs beside its GEMM in
// t chunks: a pair takes max(g, c) + min(g, c) / t. On a link so slow that every collective
// outlasts its GEMM, F saves 7/8 of its four linear GEMMs (QKV, output, up, down); on a fast one,
// 7/8 of its four collectives.
TEST(LayerCosts, TensorParallelOverlapHidesTheShorterOfGemmAndCollective) {
  const TransformerSpec model = llama2_70b();
  const double T = 4096, h = 8192, kv = 1024, f = 28672, t = 8;
  ModelSetup setup = setup_of(model, 1, true, {.tensor = 8, .sequence_parallel = true});
  const HardwareSpec& gpu = setup.hardware;
  const double gemms = gemm_ms(gpu, {T, (h + 2 * kv) / t, h}) + gemm_ms(gpu, {T, h, h / t}) +
                       gemm_ms(gpu, {T, 2 * f / t, h}) + gemm_ms(gpu, {T, h, f / t});
  const auto f_ms = [&](double link_GBps, bool overlap) {
    ModelSetup s = setup;
    s.interconnect.intra_node.bandwidth_GBps = link_GBps;
    s.parallel.tp_comm_overlap = overlap;
    return models::layer_costs(s).t_f_ms;
  };
  EXPECT_NEAR(f_ms(1, false) - f_ms(1, true), gemms * 7 / 8, 1e-9);
  const double collective = reduce_scatter_ms(gpu, {1e6, 3}, 8, 2 * T * h);  // all four move 2Th bytes
  EXPECT_NEAR(f_ms(1e6, false) - f_ms(1e6, true), 4 * collective * 7 / 8, 1e-9);
  EXPECT_LT(f_ms(300, true), f_ms(300, false));
}

TEST(StaticMemory, ShardingSplitsOptimizerStateThenGradientsThenParameters) {
  ModelSetup setup = setup_of(gpt_1_5b(), 1, false);
  const double P = 1e9, layer = 1e8;
  EXPECT_DOUBLE_EQ(static_memory(setup, P, layer).total_GB(), 16);
  setup.parallel.data = 4;
  EXPECT_DOUBLE_EQ(static_memory(setup, P, layer).total_GB(), 16);  // replicated without a sharding
  setup.parallel.sharding = Sharding::zero1;
  EXPECT_DOUBLE_EQ(static_memory(setup, P, layer).total_GB(), 2 + 2 + 3);
  setup.parallel.sharding = Sharding::zero2;
  EXPECT_DOUBLE_EQ(static_memory(setup, P, layer).total_GB(), 2 + 0.5 + 3);
  for (const Sharding full : {Sharding::zero3, Sharding::fsdp}) {
    setup.parallel.sharding = full;
    const StaticMemory m = static_memory(setup, P, layer);
    EXPECT_DOUBLE_EQ(m.parameters_GB, 0.5);
    EXPECT_DOUBLE_EQ(m.gathered_GB, 0.4);
    EXPECT_DOUBLE_EQ(m.total_GB(), 0.5 + 0.5 + 3 + 0.4);
  }
}

}  // namespace
}  // namespace zb::models
