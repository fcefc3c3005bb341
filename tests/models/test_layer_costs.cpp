// One layer's flops and activation bytes against values computed by hand from the formulas.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/schedule/error.h"
#include "models/layer_costs.h"
#include "models/transformer.h"

namespace zb::models {
namespace {

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
  const PieceCosts c = output_costs(gpt_1_5b(), 2);
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
}

TEST(Transformer, BadFieldsNameSourceFieldAndValue) {
  try {
    transformer_from_json(nlohmann::json::parse(R"({"layers": 2, "hidden": 100, "heads": 3, "vocab": 10,
        "seq_len": 8})"), "my.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "my.json: field 'heads' is 3: it must divide hidden (100)");
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

}  // namespace
}  // namespace zb::models
