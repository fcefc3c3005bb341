// Predicting every measured row on the evaluator (or SimGrid) and summarising the errors.
#include "sim/app/validate/validation.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>

#include "sim/app/catalog/engines.h"
#include "sim/app/validate/row_prediction.h"
#include "sim/support/error.h"
#include "sim/support/parallel_for.h"

namespace zb::validate {

namespace {

// SimGrid's cluster files: a folder for this run, removed when validation ends.
class ClusterFolder {
 public:
  explicit ClusterFolder(bool needed) {
    if (!needed) return;
    path_ = std::filesystem::temp_directory_path() / fmt::format("zbsim-validate-{}", ::getpid());
    std::filesystem::create_directories(path_);
  }
  ~ClusterFolder() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ClusterFolder(const ClusterFolder&) = delete;
  ClusterFolder& operator=(const ClusterFolder&) = delete;
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

std::vector<SummaryRow> summaries_by(const std::vector<RowResult>& rows, std::string RowResult::*field) {
  std::map<std::string, std::vector<double>> errors;
  for (const RowResult& r : rows) {
    if (r.counts()) errors[r.*field].push_back(r.error());
  }
  std::vector<SummaryRow> out;
  for (const auto& [key, values] : errors) out.push_back({key, summarize_errors(values)});
  return out;
}

std::vector<RankGroup> rank_groups(const std::vector<RowResult>& rows) {
  std::map<std::string, std::pair<std::vector<double>, std::vector<double>>> groups;
  for (const RowResult& r : rows) {
    if (!r.counts()) continue;
    groups[r.group].first.push_back(*r.predicted);
    groups[r.group].second.push_back(*r.measured);
  }
  std::vector<RankGroup> out;
  for (const auto& [key, pair] : groups) {
    if (pair.first.size() < 2) continue;
    out.push_back({key, static_cast<int>(pair.first.size()), spearman(pair.first, pair.second)});
  }
  std::stable_sort(out.begin(), out.end(), [](const RankGroup& a, const RankGroup& b) { return a.n > b.n; });
  return out;
}

// The tensor-core rate a row's linear GEMMs run at: what bounds its MFU. BF16 and FP16 (and the
// "mixed precision" of sources that do not say which) share the 16-bit peak; FP8 with delayed or
// current scaling the FP8 peak.
std::string gemm_rate_of(const std::string& precision) { return precision.starts_with("fp8") ? "FP8" : "16-bit"; }

std::vector<MfuCeiling> mfu_ceilings(const std::vector<RowResult>& rows) {
  std::map<std::pair<std::string, std::string>, std::vector<const RowResult*>> by;
  for (const RowResult& r : rows) {
    if (r.counts() && r.mfu > 0) by[{r.gpu, gemm_rate_of(r.precision)}].push_back(&r);
  }
  std::vector<MfuCeiling> out;
  for (const auto& [key, group] : by) {
    MfuCeiling c{key.first, key.second, static_cast<int>(group.size())};
    for (const RowResult* r : group) {
      c.best_measured = std::max(c.best_measured, r->mfu * *r->measured / *r->predicted);
      c.best_predicted = std::max(c.best_predicted, r->mfu);
    }
    for (const RowResult* r : group) c.above += r->mfu > c.best_measured ? 1 : 0;
    out.push_back(c);
  }
  return out;
}

}  // namespace

Validation validate_measured(const MeasuredTable& table, const ValidationOptions& options) {
  catalog::EngineOptions engine;
  engine.engine = options.engine;
  catalog::check_engine_options(engine);
  if (options.jobs < 1) throw InputError(fmt::format("--jobs: {} (expected 1 or more)", options.jobs));
  Validation v;
  v.path = table.path;
  v.cost_model = options.cost_model;
  v.engine = options.engine;
  v.rows.resize(table.rows.size());
  const ClusterFolder clusters(options.engine == "simgrid");
  PredictionSettings settings;
  settings.engine = options.engine;
  settings.cost_model = options.cost_model;
  settings.cluster_folder = clusters.path();
  // SimGrid forks a child per simulation and must not be entered from two threads at once.
  const int jobs = options.engine == "simgrid" ? 1 : options.jobs;
  std::mutex mutex;
  long done = 0;
  parallel_for(table.rows.size(), jobs, [&](std::size_t i) {
    v.rows[i] = predict_row(prepare_row(table.rows[i], table.path), settings);
    if (!options.progress) return;
    std::lock_guard lock(mutex);
    options.progress(++done, static_cast<long>(table.rows.size()));
  });

  std::vector<double> errors;
  for (const RowResult& r : v.rows) {
    v.covered += r.covered() ? 1 : 0;
    if (r.counts()) errors.push_back(r.error());
  }
  v.overall = summarize_errors(errors);
  v.by = {{"source", summaries_by(v.rows, &RowResult::source)},
          {"gpu", summaries_by(v.rows, &RowResult::gpu)},
          {"precision", summaries_by(v.rows, &RowResult::precision)},
          {"schedule", summaries_by(v.rows, &RowResult::generator)}};
  std::vector<double> source_medians;
  for (const SummaryRow& s : v.by.front().second) source_medians.push_back(s.errors.median_abs);
  v.source_balanced_median_abs = quantile(source_medians, 0.5);
  v.ranks = rank_groups(v.rows);
  v.mfu_ceilings = mfu_ceilings(v.rows);
  return v;
}

}  // namespace zb::validate
