// The calibration recovers efficiencies it is given: rows whose "measured" throughput is the
// model's own prediction at known efficiencies must be fitted back to them (in sample, exactly; and
// each source left out is predicted from the others).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "sim/app/validate/calibration.h"
#include "sim/app/validate/measured_csv.h"
#include "sim/app/validate/row_prediction.h"

namespace {

using namespace zb::validate;

struct Config {
  int layers, hidden, heads, seq, tp, pp, dp, mbs;
  const char* recompute;
  bool flash = false;  // a Megatron-Core run: flash attention
};

// A100 runs of small GPTs in two made-up sources, shapes chosen so each efficiency shows: small
// hidden sizes (kernel overhead, memory-bound passes), large ones (GEMMs), tp > 1 (collectives),
// long sequences with flash attention (attention), a hidden size of 1800 (heads of 225: misaligned
// GEMMs).
const Config kConfigs[] = {
    {4, 512, 8, 1024, 1, 1, 8, 1, "none"},    {4, 512, 8, 1024, 2, 2, 2, 2, "none"},
    {8, 2048, 16, 2048, 4, 2, 1, 1, "full"},  {8, 4096, 32, 2048, 8, 1, 1, 1, "none"},
    {4, 1024, 16, 512, 1, 2, 4, 4, "none"},   {8, 3072, 24, 1024, 2, 4, 1, 2, "full"},
    {4, 6144, 48, 2048, 8, 1, 1, 1, "none"},  {6, 768, 12, 1024, 4, 1, 2, 8, "none"},
    {4, 2048, 16, 1024, 2, 1, 4, 2, "full"},  {6, 1536, 16, 2048, 8, 2, 1, 1, "none"},
    {4, 1024, 8, 16384, 1, 1, 8, 1, "none", true}, {4, 2048, 16, 8192, 2, 2, 2, 1, "full", true},
    {4, 2048, 16, 4096, 2, 1, 4, 1, "none", true}, {4, 1024, 8, 32768, 4, 1, 2, 1, "none", true},
    {4, 1800, 8, 1024, 1, 1, 8, 1, "none"},   {4, 1800, 8, 2048, 2, 1, 4, 1, "full"},
};

struct Gpu {
  const char* column;        // the measured table's GPU
  const char* interconnect;  // its interconnect class
  const char* id;            // a prefix for the row ids
};
const Gpu kA100{"a100-80gb-sxm", "nvlink3+ib-hdr-200x8", "R"};

std::string header() {
  std::string text;
  for (const std::string& column : kMeasuredColumns) text += (text.empty() ? "" : ",") + column;
  return text + "\n";
}

// One row per config on `gpu`; the measured column is filled in later.
// The first ten configs: no flash attention, every dimension aligned.
constexpr std::size_t kPlainConfigs = 10;

std::string rows_text(const Gpu& gpu, const std::vector<double>& measured, std::size_t configs = std::size(kConfigs)) {
  std::string text;
  for (std::size_t i = 0; i < configs; ++i) {
    const Config& c = kConfigs[i];
    const int gpus = c.tp * c.pp * c.dp;
    const std::map<std::string, std::string> cells = {
        {"id", fmt::format("{}{}", gpu.id, i)}, {"source", i % 2 ? "SB" : "SA"}, {"model", "GPT"},
        {"layers", std::to_string(c.layers)}, {"hidden", std::to_string(c.hidden)},
        {"heads", std::to_string(c.heads)}, {"vocab", "32000"}, {"seq_len", std::to_string(c.seq)},
        {"gpu", gpu.column}, {"gpus", std::to_string(gpus)}, {"nodes_gpus_per_node", fmt::format("{}x8", (gpus + 7) / 8)},
        {"interconnect", gpu.interconnect}, {"framework", "megatron-lm"}, {"precision", "bf16"},
        {"gbs", std::to_string(c.mbs * c.dp * 4 * c.pp)}, {"mbs", std::to_string(c.mbs)}, {"tp", std::to_string(c.tp)},
        {"pp", std::to_string(c.pp)}, {"dp", std::to_string(c.dp)}, {"sequence_parallel", "0"},
        {"recompute", c.recompute}, {"schedule", c.pp > 1 ? "1f1b" : "none"}, {"notes", c.flash ? "Megatron-Core" : ""},
        {"tokens_per_s_per_gpu", measured.empty() ? "1" : fmt::format("{:.17g}", measured[i])}};
    std::string line;
    for (const std::string& column : kMeasuredColumns) {
      const auto found = cells.find(column);
      line += (line.empty() ? "" : ",") + (found == cells.end() ? std::string() : found->second);
    }
    text += line + "\n";
  }
  return text;
}

// Rows on `gpu` whose measured throughput is the model's at `truth`.
std::string made_rows(const Gpu& gpu, const zb::models::Efficiencies& truth, std::size_t configs = std::size(kConfigs)) {
  std::vector<double> measured;
  const MeasuredTable draft = parse_measured_csv(header() + rows_text(gpu, {}, configs), "synthetic.csv");
  for (const MeasuredRow& row : draft.rows) {
    PredictionSettings settings;
    settings.efficiencies = truth;
    const RowResult r = predict_row(prepare_row(row, "synthetic.csv"), settings);
    EXPECT_TRUE(r.predicted.has_value()) << row.id() << ": " << (r.uncovered.empty() ? "" : r.uncovered.back());
    measured.push_back(r.predicted.value_or(1));
  }
  return rows_text(gpu, measured, configs);
}

void expect_near(const zb::models::Efficiencies& got, const zb::models::Efficiencies& truth) {
  EXPECT_NEAR(got.gemm_sustained_fraction, truth.gemm_sustained_fraction, 0.01);
  EXPECT_NEAR(got.memory_sustained_fraction, truth.memory_sustained_fraction, 0.03);
  EXPECT_NEAR(got.kernel_overhead_us, truth.kernel_overhead_us, 2);
  EXPECT_NEAR(got.collective_efficiency, truth.collective_efficiency, 0.05);
  EXPECT_NEAR(got.attention_sustained_fraction, truth.attention_sustained_fraction, 0.03);
  EXPECT_NEAR(got.misaligned_gemm_fraction, truth.misaligned_gemm_fraction, 0.03);
}

TEST(Calibration, RecoversTheEfficienciesThatMadeTheRows) {
  const zb::models::Efficiencies truth{0.62, 0.7, 25, 0.55, 0.45, 0.5};
  CalibrationOptions options;
  options.jobs = 2;
  options.max_evaluations = 400;
  const Calibration c = calibrate(parse_measured_csv(header() + made_rows(kA100, truth), "synthetic.csv"), options);
  ASSERT_EQ(c.fits.size(), 1u);
  const auto& fit = c.fits.front();
  EXPECT_EQ(fit.architecture, "ampere");
  EXPECT_EQ(fit.preset, "");  // one preset of the architecture: its fit is the architecture's
  EXPECT_EQ(fit.rows.size(), std::size(kConfigs));
  EXPECT_TRUE(fit.not_informed.empty());
  expect_near(fit.values, truth);
  EXPECT_LT(c.fitted.p90_abs, 0.005);
  EXPECT_GT(c.roofline.median_abs, 0.1);  // the roofline was far off: the fit did the work
  // Each source alone holds enough to recover the truth, so the held-out errors are small too.
  ASSERT_EQ(c.folds.size(), 2u);
  EXPECT_LT(c.cross_validated.median_abs, 0.02);
}

// Rows without flash attention or misaligned shapes say nothing about those two efficiencies: the
// fit leaves them at the roofline's values, names them, and recovers the other four.
TEST(Calibration, EfficienciesNoRowDependsOnStayAtTheRoofline) {
  const zb::models::Efficiencies truth{0.62, 0.7, 25, 0.55, 0.45, 0.5};
  CalibrationOptions options;
  options.jobs = 2;
  options.max_evaluations = 400;
  const Calibration c =
      calibrate(parse_measured_csv(header() + made_rows(kA100, truth, kPlainConfigs), "synthetic.csv"), options);
  ASSERT_EQ(c.fits.size(), 1u);
  const auto& fit = c.fits.front();
  EXPECT_THAT(fit.not_informed, ::testing::ElementsAre("attention_sustained_fraction", "misaligned_gemm_fraction"));
  EXPECT_DOUBLE_EQ(fit.values.attention_sustained_fraction, zb::models::kAttentionSustainedFraction);
  EXPECT_DOUBLE_EQ(fit.values.misaligned_gemm_fraction, 1);
  EXPECT_NEAR(fit.values.gemm_sustained_fraction, truth.gemm_sustained_fraction, 0.01);
  EXPECT_LT(c.fitted.p90_abs, 0.005);
  EXPECT_EQ(calibration_file(c, fit)["not_informed"].size(), 2u);
}

// Two presets of one architecture, each with rows enough, made at different efficiencies (a GPU at
// a lower power limit): each gets its own fit, and each row is predicted with its preset's.
TEST(Calibration, PresetsWithRowsEnoughGetTheirOwnFit) {
  const Gpu sxm{"h100-sxm-80gb", "nvlink4+ib-ndr-400x8", "X"};
  const Gpu capped{"h100-96gb-500w", "nvlink4+rdma-400x8", "Y"};
  const zb::models::Efficiencies full{0.7, 0.8, 10, 0.8, 0.6, 0.6};
  const zb::models::Efficiencies slow{0.45, 0.65, 30, 0.6, 0.35, 0.4};
  CalibrationOptions options;
  options.jobs = 2;
  options.max_evaluations = 1000;
  const Calibration c =
      calibrate(parse_measured_csv(header() + made_rows(sxm, full) + made_rows(capped, slow), "synthetic.csv"), options);
  ASSERT_EQ(c.fits.size(), 3u);  // each preset, and the architecture's over both
  // These small models pin the efficiencies less tightly on an H100 than on an A100 (a GEMM fraction
  // and a memory fraction trade off within 0.04 at the same loss): the predictions are what must
  // match, and each preset's GEMM fraction must be its own.
  for (const ArchitectureFit& fit : c.fits) {
    EXPECT_EQ(fit.architecture, "hopper");
    if (fit.preset == "h100-sxm") {
      EXPECT_NEAR(fit.values.gemm_sustained_fraction, full.gemm_sustained_fraction, 0.03);
    }
    if (fit.preset == "h100-96gb-500w") {
      EXPECT_NEAR(fit.values.gemm_sustained_fraction, slow.gemm_sustained_fraction, 0.03);
    }
  }
  EXPECT_LT(c.fitted.p90_abs, 0.005);
}

}  // namespace
