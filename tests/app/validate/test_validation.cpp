// Validation on a small table with known answers: each covered row's prediction equals the one of
// a scenario written here by hand from the row's columns (so a wrong mapping rule fails), its error
// is that prediction over the measured value, uncovered rows keep their reasons, and the summaries
// are the quantiles of those errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/app/catalog/run_row.h"
#include "sim/app/catalog/scenario.h"
#include "sim/app/validate/error_stats.h"
#include "sim/app/validate/validation.h"
#include "sim/app/validate/validation_report.h"
#include "sim/app/validate/scatter_svg.h"

namespace {

using namespace zb::validate;

const std::string kKnown = std::string(ZB_SOURCE_DIR) + "/tests/app/validate/data/known.csv";

// tokens/s per GPU of a scenario on the evaluator, as validate must compute it.
double predicted_tokens(const nlohmann::json& object, const std::string& schedule, int seq_len) {
  zb::Scenario scenario = zb::scenario_from_json(object, "test", "");
  zb::derive_model_costs(scenario);
  const auto row = zb::catalog::run_generator_row(schedule, scenario, zb::catalog::EngineOptions{}, nullptr);
  for (const auto& [name, value] : row.extras) {
    if (name == "samples_per_s_per_gpu") return value * seq_len;
  }
  ADD_FAILURE() << "no throughput: " << row.status << " " << row.reason;
  return 0;
}

// Rows G1-G4 of known.csv: a GPT of 8 layers on one DGX A100 node, tp 2, pp 2, dp 2, batch 16.
nlohmann::json gpt_scenario(int chunks) {
  return {
      {"model",
       {{"name", "GPT-tiny"}, {"layers", 8}, {"hidden", 1024}, {"heads", 16}, {"kv_heads", 16}, {"ffn_hidden", 4096},
        {"vocab", 51200}, {"seq_len", 1024}, {"mlp", "gelu"}, {"norm", "layernorm"}, {"bias", true},
        {"dropout", true}, {"positions", "learned"}, {"tied_embeddings", true}}},
      {"hardware", "a100-80gb"},
      {"cluster",
       {{"nodes", 1}, {"gpus_per_node", 8},
        {"intra_node", {{"bandwidth_GBps", 300}, {"latency_us", 3}}},
        {"inter_node", {{"bandwidth_GBps", 25}, {"latency_us", 10}, {"nics_per_node", 8}}}}},
      {"microbatch_size", 1},
      {"split", "even"},
      {"flash_attention", false},  // Megatron-LM of 2021
      {"tensor_parallel", 2},
      {"sequence_parallel", false},
      {"data_parallel", 2},
      {"sharding", "none"},  // SC21: DDP
      {"recompute", "full"},
      {"problem", {{"p", 2}, {"m", 8}, {"chunks", chunks}, {"placement", chunks > 1 ? "interleaved" : "linear"}}}};
}

// Row L1: a Llama of 4 layers on one DGX H100 node, data parallel 8, NeMo.
nlohmann::json llama_scenario() {
  return {
      {"model",
       {{"name", "Llama-tiny"}, {"layers", 4}, {"hidden", 1024}, {"heads", 16}, {"kv_heads", 4}, {"ffn_hidden", 2816},
        {"vocab", 32128}, {"seq_len", 2048}, {"mlp", "swiglu"}, {"norm", "rmsnorm"}, {"bias", false},
        {"dropout", false}, {"positions", "rope"}, {"tied_embeddings", false}}},
      {"hardware", "h100-sxm"},
      {"cluster",
       {{"nodes", 1}, {"gpus_per_node", 8},
        {"intra_node", {{"bandwidth_GBps", 450}, {"latency_us", 3}}},
        {"inter_node", {{"bandwidth_GBps", 50}, {"latency_us", 10}, {"nics_per_node", 8}}}}},
      {"microbatch_size", 2},
      {"split", "even"},
      {"flash_attention", true},
      {"tensor_parallel", 1},
      {"sequence_parallel", false},
      {"data_parallel", 8},
      {"sharding", "zero-1"},  // NeMo's distributed optimizer
      {"recompute", "none"},
      {"problem", {{"p", 1}, {"m", 1}, {"chunks", 1}, {"placement", "linear"}}}};
}

const RowResult& row(const Validation& v, const std::string& id) {
  for (const RowResult& r : v.rows) {
    if (r.id == id) return r;
  }
  throw std::runtime_error("no row " + id);
}

class KnownTable : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ValidationOptions options;
    options.jobs = 3;
    validation_ = new Validation(validate_measured(read_measured_csv(kKnown), options));
  }
  static void TearDownTestSuite() { delete validation_; }
  static Validation* validation_;
};
Validation* KnownTable::validation_ = nullptr;

TEST_F(KnownTable, CoveredRowsPredictAsTheHandWrittenScenarios) {
  const Validation& v = *validation_;
  const double gpt = predicted_tokens(gpt_scenario(1), "1f1b", 1024);
  const double interleaved = predicted_tokens(gpt_scenario(2), "1f1b-i", 1024);
  const double llama = predicted_tokens(llama_scenario(), "1f1b", 2048);
  EXPECT_DOUBLE_EQ(*row(v, "G1").predicted, gpt);
  EXPECT_DOUBLE_EQ(*row(v, "G2").predicted, interleaved);
  EXPECT_DOUBLE_EQ(*row(v, "G3").predicted, gpt);
  EXPECT_DOUBLE_EQ(*row(v, "L1").predicted, llama);
  EXPECT_DOUBLE_EQ(row(v, "G1").error(), gpt / 50000 - 1);
  EXPECT_DOUBLE_EQ(row(v, "L1").error(), llama / 800000 - 1);
  EXPECT_EQ(row(v, "G2").generator, "1f1b-i");
  EXPECT_GT(row(v, "G1").step_time_s, 0);
  EXPECT_GT(row(v, "G1").memory_GB, 0);
  EXPECT_DOUBLE_EQ(row(v, "G1").memory_capacity_GB, 76);  // a100-80gb: 80 GB, 4 reserved
}

TEST_F(KnownTable, UncoveredRowsAreReportedWithTheirReasonsNotDropped) {
  const Validation& v = *validation_;
  ASSERT_EQ(v.rows.size(), 8u);
  EXPECT_EQ(v.covered, 5);
  ASSERT_EQ(row(v, "F1").uncovered.size(), 1u);  // FP8 on an A100
  EXPECT_NE(row(v, "F1").uncovered[0].find("has no FP8 tensor cores"), std::string::npos) << row(v, "F1").uncovered[0];
  EXPECT_EQ(row(v, "M1").uncovered, std::vector<std::string>{"mixture of experts without moe_topk or moe_ffn_hidden"});
  EXPECT_EQ(row(v, "Q1").uncovered, std::vector<std::string>{"schedule 'gpipe'"});
  EXPECT_FALSE(row(v, "F1").predicted.has_value());
  const std::string table = validation_table(v);
  EXPECT_NE(table.find("  F1     the cost model refuses it"), std::string::npos) << table;
  EXPECT_NE(table.find("(not counted: re-prints G1)"), std::string::npos);
  const std::string csv = validation_csv(v);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 9);  // the header and 8 rows (Q1's break is not in a cell)
  EXPECT_NE(csv.find("M1,8,S2b,GPT-tiny,a100-80gb-sxm,fp16,1f1b,1f1b,uncovered,50000,"), std::string::npos) << csv;
}

TEST_F(KnownTable, SummariesAreTheQuantilesOfTheCountedErrors) {
  const Validation& v = *validation_;
  // G4 re-prints G1: it is predicted but not counted.
  const std::vector<double> counted = {row(v, "G1").error(), row(v, "G2").error(), row(v, "G3").error(), row(v, "L1").error()};
  const ErrorSummary expected = summarize_errors(counted);
  EXPECT_EQ(v.overall.n, 4);
  EXPECT_DOUBLE_EQ(v.overall.median_abs, expected.median_abs);
  EXPECT_DOUBLE_EQ(v.overall.p90_abs, expected.p90_abs);
  EXPECT_DOUBLE_EQ(v.overall.median, expected.median);
  ASSERT_EQ(v.by[0].first, "source");
  ASSERT_EQ(v.by[0].second.size(), 2u);  // S1b, S2b
  EXPECT_EQ(v.by[0].second[0].key, "S1b");
  EXPECT_DOUBLE_EQ(v.by[0].second[0].errors.median, row(v, "L1").error());
  EXPECT_EQ(v.by[0].second[1].errors.n, 3);
  // The source-balanced median: the median of S1b's and S2b's medians.
  EXPECT_DOUBLE_EQ(v.source_balanced_median_abs,
                   0.5 * (std::abs(row(v, "L1").error()) + v.by[0].second[1].errors.median_abs));
  // One rank group: the counted GPT rows on the A100 node.
  ASSERT_EQ(v.ranks.size(), 1u);
  EXPECT_EQ(v.ranks[0].n, 3);
  const auto pair = [&](const char* id) { return std::pair(*row(v, id).predicted, *row(v, id).measured); };
  const auto [p1, m1] = pair("G1");
  const auto [p2, m2] = pair("G2");
  const auto [p3, m3] = pair("G3");
  EXPECT_EQ(v.ranks[0].rho, spearman({p1, p2, p3}, {m1, m2, m3}));
}

// The best measured MFU of a GPU and GEMM rate is a row's predicted MFU scaled by measured /
// predicted (the same FLOPs over the same peak); fp16 and bf16 rows share the 16-bit rate.
TEST_F(KnownTable, MfuCeilingsPerGpuAndGemmRate) {
  const Validation& v = *validation_;
  ASSERT_EQ(v.mfu_ceilings.size(), 2u);  // a100 16-bit (G1, G2 fp16; G3 bf16), h100 16-bit (L1)
  const MfuCeiling& a100 = v.mfu_ceilings[0];
  EXPECT_EQ(a100.gpu, "a100-80gb-sxm");
  EXPECT_EQ(a100.rate, "16-bit");
  EXPECT_EQ(v.mfu_ceilings[1].rate, "16-bit");
  EXPECT_EQ(a100.n, 3);
  double best = 0, predicted = 0;
  int above = 0;
  for (const char* id : {"G1", "G2", "G3"}) {
    best = std::max(best, row(v, id).mfu * *row(v, id).measured / *row(v, id).predicted);
    predicted = std::max(predicted, row(v, id).mfu);
  }
  for (const char* id : {"G1", "G2", "G3"}) above += row(v, id).mfu > best ? 1 : 0;
  EXPECT_DOUBLE_EQ(a100.best_measured, best);
  EXPECT_DOUBLE_EQ(a100.best_predicted, predicted);
  EXPECT_EQ(a100.above, above);
  EXPECT_GT(above, 0);  // every GPT prediction here is faster than its measurement
}

TEST_F(KnownTable, JsonAndScatterCarryEveryRow) {
  const nlohmann::json json = validation_json(*validation_);
  EXPECT_EQ(json["rows"].size(), 8u);
  EXPECT_EQ(json["rows_predicted"], 5);
  EXPECT_EQ(json["rows_counted"], 4);
  EXPECT_EQ(json["rows"][4]["status"], "uncovered");
  EXPECT_EQ(json["rows"][3]["excluded"], "re-prints G1");
  const std::string svg = validation_scatter_svg(*validation_);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  int dots = 0;
  for (std::size_t at = svg.find("<circle cx"); at != std::string::npos; at = svg.find("<circle cx", at + 1)) ++dots;
  EXPECT_EQ(dots, 5 + 2);  // five rows, two legend entries (S1b, S2b)
  EXPECT_NE(svg.find("fill=\"none\""), std::string::npos);  // G4, not counted, is a ring
}

TEST_F(KnownTable, SameInputSameOutput) {
  ValidationOptions one;
  one.jobs = 1;
  const Validation again = validate_measured(read_measured_csv(kKnown), one);
  EXPECT_EQ(validation_json(again).dump(), validation_json(*validation_).dump());
}

}  // namespace
