// The measured table's reader, and a row's model, machine and target.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "sim/app/validate/measured_csv.h"
#include "sim/app/validate/measured_target.h"
#include "sim/app/validate/row_machine.h"
#include "sim/app/validate/row_model.h"
#include "sim/app/validate/row_scenario.h"
#include "sim/support/error.h"
#include "tests/testing/input_error.h"

// The InputError message of `call` contains `part`.
#define EXPECT_INPUT_ERROR(call, part) \
  EXPECT_THAT(zb::testing::error_of([&] { (void)(call); }), ::testing::HasSubstr(part))

namespace {

using namespace zb::validate;

const std::string kKnown = std::string(ZB_SOURCE_DIR) + "/tests/app/validate/data/known.csv";

std::string header() {
  std::string h;
  for (const std::string& column : kMeasuredColumns) h += (h.empty() ? "" : ",") + column;
  return h;
}

const MeasuredRow& find(const MeasuredTable& table, const std::string& id) {
  for (const MeasuredRow& row : table.rows) {
    if (row.id() == id) return row;
  }
  throw std::runtime_error("no row " + id);
}

TEST(MeasuredCsv, ReadsQuotedCellsCommentsAndLineNumbers) {
  const MeasuredTable table = read_measured_csv(kKnown);
  ASSERT_EQ(table.rows.size(), 8u);
  EXPECT_EQ(table.rows.front().line, 3);  // a comment line, the header, then G1
  const MeasuredRow& q = find(table, "Q1");
  EXPECT_EQ(q.cell("model"), "GPT, \"quoted\"");
  EXPECT_EQ(q.cell("notes"), "a note, with a comma\nand a line break");
  EXPECT_EQ(find(table, "L1").line, q.line + 2);  // Q1 spans two lines
}

TEST(MeasuredCsv, MalformedTablesNameFileLineAndColumn) {
  const std::string h = header();
  const std::string good_row = std::string("A") + std::string(kMeasuredColumns.size() - 1, ',');
  EXPECT_INPUT_ERROR(parse_measured_csv("id,source\nA,B\n", "t.csv"), "t.csv:1: column 'model' missing");
  EXPECT_INPUT_ERROR(parse_measured_csv(h + "\nA,B\n", "t.csv"), "t.csv:2: 2 cells, the header has");
  EXPECT_INPUT_ERROR(parse_measured_csv(h + "\n" + good_row + "\n" + good_row + "\n", "t.csv"),
                     "t.csv:3: column 'id': 'A' is a duplicate");
  EXPECT_INPUT_ERROR(parse_measured_csv(h + "\n\"A" + std::string(kMeasuredColumns.size() - 1, ',') + "\n", "t.csv"),
                     "t.csv: not CSV");
  EXPECT_INPUT_ERROR(parse_measured_csv("", "t.csv"), "t.csv: no header line");
  EXPECT_NO_THROW(parse_measured_csv("# a comment\n" + h + "\n" + good_row + "\n\n", "t.csv"));
}

TEST(MeasuredCsv, BadNumbersNameTheCell) {
  const MeasuredTable table = parse_measured_csv(
      header() + "\nX" + std::string(kMeasuredColumns.size() - 1, ',') + "\n", "t.csv");
  MeasuredRow row = table.rows.front();
  row.cells["tp"] = "two";
  EXPECT_INPUT_ERROR(row_scenario(row, "t.csv"), "t.csv:2 (row X): column 'tp': 'two' is not a whole number");
}

TEST(RowModel, LayersFromTheModelSizeAreAMultipleOfThePipeline) {
  // BLOOM's "200B" at hidden 14400, vocabulary 250k: (200e9 - 250000 x 14400) / (12 x 14400^2) = 78.9
  EXPECT_EQ(layers_from_size(200e9, 14400, 250000, 4), 80);
  EXPECT_EQ(layers_from_size(194e9, 14400, 250000, 6), 78);  // 76.5 -> 13 x 6
  EXPECT_EQ(layers_from_size(1e3, 14400, 250000, 4), 4);     // never fewer than one layer per stage
}

TEST(RowModel, FamiliesAndMegatronVocabularyPadding) {
  const MeasuredTable table = read_measured_csv(kKnown);
  const RowModel gpt = row_model(find(table, "G1"), 2, kKnown);
  EXPECT_EQ(gpt.object["mlp"], "gelu");
  EXPECT_EQ(gpt.object["positions"], "learned");
  EXPECT_EQ(gpt.object["ffn_hidden"], 4096);  // not given: 4h, flagged
  EXPECT_EQ(gpt.assumptions.front(), "ffn_hidden 4h (not stated)");
  const RowModel llama = row_model(find(table, "L1"), 1, kKnown);
  EXPECT_EQ(llama.object["mlp"], "swiglu");
  EXPECT_EQ(llama.object["norm"], "rmsnorm");
  EXPECT_EQ(llama.object["tied_embeddings"], false);
  EXPECT_EQ(llama.object["vocab"], 32128);  // NeMo pads 32001 to a multiple of 128 x tp
  EXPECT_EQ(llama.vocab, 32001);
  EXPECT_EQ(row_model(find(table, "L1"), 4, kKnown).object["vocab"], 32256);  // 512 x 63
}

// GPT-OSS: SwiGLU with biases, and the window of its sliding-window layers from the notes.
TEST(RowModel, SlidingWindowFromTheNotes) {
  MeasuredRow row = find(read_measured_csv(kKnown), "L1");
  row.cells["model"] = "GPT OSS 120B";
  row.cells["notes"] = "head_dim 64; alternating 128-token sliding-window / full attention";
  const RowModel oss = row_model(row, 1, kKnown);
  EXPECT_TRUE(oss.uncovered.empty()) << oss.uncovered;
  EXPECT_EQ(oss.object["mlp"], "swiglu");
  EXPECT_EQ(oss.object["bias"], true);
  EXPECT_EQ(oss.object["sliding_window"], 128);
  EXPECT_EQ(oss.object["sliding_window_share"], 0.5);
  row.cells["notes"] = "4096-token sliding-window attention";
  EXPECT_EQ(row_model(row, 1, kKnown).object["sliding_window"], 4096);
  EXPECT_EQ(row_model(row, 1, kKnown).object["sliding_window_share"], 1.0);
  row.cells["notes"] = "sliding-window attention";
  EXPECT_EQ(row_model(row, 1, kKnown).uncovered, "sliding-window attention without its window size");
}

// DeepSeek-V3: latent attention's ranks and widths and the dense first layers from the notes.
TEST(RowModel, LatentAttentionAndDenseLayersFromTheNotes) {
  MeasuredRow row = find(read_measured_csv(kKnown), "L1");
  row.cells["model"] = "DeepSeekV3";
  row.cells["moe_experts"] = "16";
  row.cells["moe_topk"] = "2";
  row.cells["moe_ffn_hidden"] = "256";
  row.cells["notes"] = "MLA (q_lora 1536; kv_lora 512; qk 128+64 rope; v 128); first 3 layers dense with FFN 18432";
  const RowModel deepseek = row_model(row, 1, kKnown);
  ASSERT_TRUE(deepseek.uncovered.empty()) << deepseek.uncovered;
  EXPECT_EQ(deepseek.object["q_lora_rank"], 1536);
  EXPECT_EQ(deepseek.object["kv_lora_rank"], 512);
  EXPECT_EQ(deepseek.object["head_dim"], 128);
  EXPECT_EQ(deepseek.object["rope_head_dim"], 64);
  EXPECT_EQ(deepseek.object["v_head_dim"], 128);
  EXPECT_EQ(deepseek.object["moe_dense_layers"], 3);
  EXPECT_FALSE(deepseek.object.contains("kv_heads"));
  EXPECT_EQ(deepseek.object["mlp"], "swiglu");
  row.cells["notes"] = "MLA";
  EXPECT_EQ(row_model(row, 1, kKnown).uncovered, "multi-head latent attention (MLA) without its ranks and head widths");
}

TEST(RowMachine, ClusterFromTheInterconnectClassAndPresets) {
  const MeasuredTable table = read_measured_csv(kKnown);
  const RowMachine a100 = row_machine(find(table, "G1"));
  EXPECT_EQ(a100.hardware, "a100-80gb");
  EXPECT_EQ(a100.cluster["nodes"], 1);
  EXPECT_EQ(a100.cluster["intra_node"]["bandwidth_GBps"], 300);  // NVLink 3, the a100-80gb preset's
  EXPECT_EQ(a100.cluster["inter_node"]["bandwidth_GBps"], 25);   // HDR 200 Gb/s
  EXPECT_EQ(a100.cluster["inter_node"]["nics_per_node"], 8);
  MeasuredRow row = find(table, "G1");
  row.cells["interconnect"] = "nvlink3+omnipath-100x4";
  // 4 NICs of 12.5 GB/s for 8 GPUs: each GPU's share, 6.25 GB/s, on a link of its own.
  EXPECT_EQ(row_machine(row).cluster["inter_node"]["bandwidth_GBps"], 6.25);
  EXPECT_EQ(row_machine(row).cluster["inter_node"]["nics_per_node"], 8);
  row.cells["gpu"] = "h100-96gb-500w";
  EXPECT_EQ(row_machine(row).hardware, "h100-96gb-500w");
  row.cells["gpu"] = "b200";
  EXPECT_EQ(row_machine(row).uncovered, "no hardware preset for GPU 'b200'");
}

// Tensor-parallel communication overlap where the notes say so, with sequence parallelism (which
// it needs) assumed on when the row is silent; never where the note says it was off.
// NeMo's MoE rows name Megatron's recompute modules; those zbsim models are passed on, the others named.
TEST(RowScenario, RecomputeModulesFromTheNotes) {
  MeasuredRow row = find(read_measured_csv(kKnown), "G1");
  row.cells["recompute"] = "selective";
  row.cells["notes"] = R"(GPT-OSS 120B recipe: selective recompute ["layernorm","moe_act","mlp"])";
  const RowScenario scenario = row_scenario(row, "t.csv");
  ASSERT_TRUE(scenario.scenario);
  EXPECT_EQ(scenario.scenario->at("recompute_modules"), nlohmann::json({"layernorm", "moe_act"}));
  EXPECT_THAT(scenario.assumptions, ::testing::Contains("recompute module mlp not modelled"));
  row.cells["recompute"] = "full";
  EXPECT_FALSE(row_scenario(row, "t.csv").scenario->contains("recompute_modules"));
}

// torchao's row-wise FP8 where the notes say so; tensor-wise and other precisions are left as given.
TEST(RowScenario, RowwiseFp8FromTheNotes) {
  MeasuredRow row = find(read_measured_csv(kKnown), "G1");
  row.cells["precision"] = "fp8";
  row.cells["notes"] = "vanilla TP; quantization: float8 rowwise; FSDP 8 x TP 8";
  EXPECT_EQ(row_scenario(row, "t.csv").scenario->at("precision"), "fp8-rowwise");
  row.cells["notes"] = "vanilla TP; quantization: float8 tensorwise; FSDP 8 x TP 8";
  EXPECT_EQ(row_scenario(row, "t.csv").scenario->at("precision"), "fp8");
  row.cells["precision"] = "bf16";
  row.cells["notes"] = "float8 rowwise elsewhere";
  EXPECT_EQ(row_scenario(row, "t.csv").scenario->at("precision"), "bf16");
}

TEST(RowScenario, TensorParallelOverlapFromTheNotes) {
  MeasuredRow row = find(read_measured_csv(kKnown), "G1");  // tp 2, sequence_parallel not stated
  const auto scenario = [&](const std::string& notes) {
    row.cells["notes"] = notes;
    return row_scenario(row, "t.csv");
  };
  EXPECT_FALSE(scenario("MHA").scenario->at("tp_comm_overlap").get<bool>());
  EXPECT_FALSE(scenario("MHA").scenario->at("sequence_parallel").get<bool>());  // megatron-lm: off unless stated
  for (const char* said : {"TP-comm overlap", "DP/TP/PP comm overlap on", "async TP", "FSDP + TP8 + AsyncTP"}) {
    const RowScenario overlapped = scenario(said);
    EXPECT_TRUE(overlapped.scenario->at("tp_comm_overlap").get<bool>()) << said;
    EXPECT_TRUE(overlapped.scenario->at("sequence_parallel").get<bool>()) << said;
  }
  EXPECT_FALSE(scenario("without torch.compile / AsyncTP / Float8").scenario->at("tp_comm_overlap").get<bool>());
  EXPECT_FALSE(scenario("vanilla TP").scenario->at("tp_comm_overlap").get<bool>());
  row.cells["sequence_parallel"] = "0";
  EXPECT_THAT(scenario("async TP").uncovered, ::testing::Contains("TP communication overlap without sequence parallelism"));
}

TEST(MeasuredTarget, ColumnThenStepTimeThenTheSourcesFlopFormula) {
  const MeasuredTable table = read_measured_csv(kKnown);
  const auto target = [&](const std::string& id) {
    const MeasuredRow& row = find(table, id);
    return measured_target(row, row_model(row, 2, kKnown), kKnown);
  };
  EXPECT_EQ(target("G1").how, "tokens_per_s_per_gpu");
  EXPECT_DOUBLE_EQ(*target("G2").tokens_per_s_per_gpu, 50000);  // 16 x 1024 / (0.04096 s x 8)
  EXPECT_EQ(target("G2").how, "gbs x seq_len / (step_time_s x gpus)");
  EXPECT_NEAR(*target("G3").tokens_per_s_per_gpu, 50000, 1e-6);  // the file's TFLOP/s is 50000 x Eq. 3 / 1e12
  EXPECT_EQ(target("G3").how, "TFLOP/s / FLOPs per token (SC21 Eq. 3)");
  EXPECT_EQ(target("G4").excluded, "re-prints G1");
  EXPECT_EQ(target("G1").excluded, "");
}

TEST(MeasuredTarget, FlopFormulasAgreeWhereTheyMust) {
  RowModel m;
  m.layers = 24, m.hidden = 2048, m.heads = 16, m.kv_heads = 16, m.ffn_hidden = 8192, m.vocab = 51200, m.seq_len = 2048;
  // Megatron's model FLOPs for MHA with a 4h GeLU MLP: 72 L h^2 (1 + s/6h + V/12Lh)
  const double L = 24, h = 2048, s = 2048, V = 51200;
  EXPECT_NEAR(flops_per_token_megatron(m) / (72 * L * h * h * (1 + s / (6 * h) + V / (12 * L * h))), 1.0, 1e-12);
  // Eq. 3 counts the recompute forward: 4/3 of the model FLOPs when the logit terms are dropped.
  EXPECT_NEAR(flops_per_token_sc21(m) / (96 * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))), 1.0, 1e-12);
  // NeMo's 6N + 6hV + 12Lhs equals Megatron's for MHA without a gate.
  EXPECT_NEAR(flops_per_token_nemo(m) / flops_per_token_megatron(m), 1.0, 1e-12);
}

}  // namespace
