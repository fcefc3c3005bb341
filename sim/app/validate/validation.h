// zbsim validate: every measured row predicted (or the reasons it cannot be), the errors of the
// predictions summarised per source, GPU, precision and schedule, and the rank agreement
// (Spearman) within each group of rows that share a model and a kind of cluster.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "models/hardware.h"
#include "sim/app/validate/error_stats.h"
#include "sim/app/validate/measured_csv.h"

namespace zb::validate {

struct ValidationOptions {
  std::string engine = "eval";  // eval | simgrid
  models::CostModel cost_model = models::CostModel::calibrated;
  int jobs = 1;                 // rows predicted at once (the evaluator; SimGrid runs one at a time)
  std::function<void(long done, long total)> progress;
};

struct RowResult {
  int line = 0;
  std::string id, source, model, gpu, precision, schedule;  // the row's own
  std::string generator;       // the zbsim schedule it ran as
  std::string group;           // the Spearman group: model shape x GPU x interconnect
  std::optional<double> measured;   // tokens/s/GPU
  std::string measured_how;
  std::optional<double> predicted;  // tokens/s/GPU
  double step_time_s = 0;           // predicted, steady state
  double mfu = 0;                   // predicted, model FLOPs against the bf16 peak
  double memory_GB = 0;             // predicted peak per GPU
  double memory_capacity_GB = 0;    // what the GPU has for it (capacity - reserved)
  std::vector<std::string> uncovered;    // why the row is not predicted
  std::vector<std::string> assumptions;  // what the columns did not give
  std::string excluded;                  // why it is left out of the statistics

  bool covered() const { return predicted.has_value() && measured.has_value(); }
  bool counts() const { return covered() && excluded.empty(); }
  double error() const { return *predicted / *measured - 1; }  // covered rows only
};

struct SummaryRow {
  std::string key;
  ErrorSummary errors;
};

struct RankGroup {
  std::string key;
  int n = 0;
  std::optional<double> rho;
};

// MFU (model FLOPs over the 16-bit peak, throughput.h) of one GPU and GEMM rate ("16-bit": bf16,
// fp16 or unstated; "FP8": fp8, fp8-cs): the best any counted row measured (its predicted MFU times
// measured / predicted: the same FLOPs and peak) and the best predicted, and how many predictions
// exceed that best measured value.
struct MfuCeiling {
  std::string gpu, rate;
  int n = 0;
  double best_measured = 0;
  double best_predicted = 0;
  int above = 0;
};

struct Validation {
  std::string path;
  std::string engine;
  models::CostModel cost_model = models::CostModel::calibrated;
  std::vector<RowResult> rows;  // in file order
  int covered = 0;              // rows predicted (counted or not)
  ErrorSummary overall;         // over the rows that count
  double source_balanced_median_abs = 0;  // the median of the per-source median |e|
  // "source", "gpu", "precision", "schedule": one summary row per value, sorted by it.
  std::vector<std::pair<std::string, std::vector<SummaryRow>>> by;
  std::vector<RankGroup> ranks;  // every group with 2 or more rows that count, largest first
  std::vector<MfuCeiling> mfu_ceilings;  // by GPU, then GEMM rate
};

// The groups of kRankGroupMinimum or more rows are the ones the issue asks rho >= 0.8 of.
inline constexpr int kRankGroupMinimum = 5;

Validation validate_measured(const MeasuredTable& table, const ValidationOptions& options);

}  // namespace zb::validate
