// Predicting every measured row on the evaluator (or SimGrid) and summarising the errors.
#include "sim/app/validate/validation.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>

#include "sim/app/catalog/engines.h"
#include "sim/app/catalog/run_row.h"
#include "sim/app/catalog/scenario.h"
#include "sim/app/validate/detail/row_cells.h"
#include "sim/app/validate/measured_target.h"
#include "sim/app/validate/row_scenario.h"
#include "sim/support/error.h"
#include "sim/support/parallel_for.h"
#include "sim/support/time_units.h"

namespace zb::validate {

namespace {

std::optional<double> extra(const catalog::ResultRow& row, const std::string& key) {
  for (const auto& [name, value] : row.extras) {
    if (name == key) return value;
  }
  return std::nullopt;
}

// SimGrid reads its cluster from a file: one per row, in a folder removed when validation ends.
class ClusterFiles {
 public:
  explicit ClusterFiles(bool needed) {
    if (!needed) return;
    folder_ = std::filesystem::temp_directory_path() / fmt::format("zbsim-validate-{}", ::getpid());
    std::filesystem::create_directories(folder_);
  }
  ~ClusterFiles() {
    std::error_code ignored;
    if (!folder_.empty()) std::filesystem::remove_all(folder_, ignored);
  }
  ClusterFiles(const ClusterFiles&) = delete;
  ClusterFiles& operator=(const ClusterFiles&) = delete;

  std::string write(const std::string& id, const nlohmann::json& cluster) const {
    const std::filesystem::path path = folder_ / (id + ".json");
    std::ofstream(path) << cluster.dump(2) << "\n";
    return path.string();
  }

 private:
  std::filesystem::path folder_;
};

std::string group_key(const RowResult& r, const RowModel& m, const MeasuredRow& row) {
  const std::string shape = m.layers > 0 ? fmt::format("L{} h{} a{}/{} f{} V{} s{}", m.layers, m.hidden, m.heads,
                                                       m.kv_heads, m.ffn_hidden, m.vocab, m.seq_len)
                                         : r.model;
  const std::string experts = row.cell("moe_experts").empty() ? "" : fmt::format(" E{}", row.cell("moe_experts"));
  return fmt::format("{}{} | {} {}", shape, experts, r.gpu, row.cell("interconnect"));
}

// The row's prediction, or the reason zbsim could not make one (added to `r.uncovered`).
void predict(RowResult& r, const RowScenario& rs, const ValidationOptions& options, const ClusterFiles& clusters,
             const std::string& label) {
  try {
    Scenario scenario = scenario_from_json(*rs.scenario, label, "");
    derive_model_costs(scenario);
    catalog::EngineOptions engine;
    engine.engine = options.engine;
    if (options.engine == "simgrid") engine.cluster = clusters.write(r.id, (*rs.scenario)["cluster"]);
    const catalog::ResultRow row = catalog::run_generator_row(rs.schedule, scenario, engine, nullptr);
    const auto step = extra(row, "step_time");
    const auto samples = extra(row, "samples_per_s_per_gpu");
    if (!row.has_metrics || !step || !samples) {
      r.uncovered.push_back(fmt::format("zbsim could not run it: {} {}", row.status, row.reason));
      return;
    }
    r.step_time_s = *step * seconds_per(scenario.spec.time_unit);
    r.predicted = *samples * rs.model.seq_len;
    r.mfu = extra(row, "mfu").value_or(0);
    r.memory_GB = extra(row, "memory_GB").value_or(0);
    r.memory_capacity_GB = scenario.model->hardware.memory_GB - scenario.model->hardware.reserved_GB;
  } catch (const InputError& error) {  // a setup the cost model refuses (SetupInfeasible and the like)
    r.uncovered.push_back(fmt::format("the cost model refuses it: {}", error.what()));
  }
}

RowResult validate_row(const MeasuredRow& row, const std::string& file, const ValidationOptions& options,
                       const ClusterFiles& clusters) {
  RowResult r;
  r.line = row.line;
  r.id = row.id();
  r.source = row.cell("source");
  r.model = row.cell("model");
  r.gpu = row.cell("gpu");
  r.precision = row.cell("precision").empty() ? "unstated" : row.cell("precision");
  r.schedule = row.cell("schedule");
  const RowScenario rs = row_scenario(row, file);
  const MeasuredTarget target = measured_target(row, rs.model, file);
  r.generator = rs.schedule;
  r.group = group_key(r, rs.model, row);
  r.assumptions = rs.assumptions;
  r.uncovered = rs.uncovered;
  r.measured = target.tokens_per_s_per_gpu;
  r.measured_how = target.how;
  r.excluded = target.excluded;
  if (!target.missing.empty()) r.uncovered.push_back(target.missing);
  if (r.uncovered.empty()) predict(r, rs, options, clusters, row_label(row, file));
  return r;
}

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

}  // namespace

Validation validate_measured(const MeasuredTable& table, const ValidationOptions& options) {
  catalog::EngineOptions engine;
  engine.engine = options.engine;
  catalog::check_engine_options(engine);
  if (options.jobs < 1) throw InputError(fmt::format("--jobs: {} (expected 1 or more)", options.jobs));
  Validation v;
  v.path = table.path;
  v.engine = options.engine;
  v.rows.resize(table.rows.size());
  const ClusterFiles clusters(options.engine == "simgrid");
  // SimGrid forks a child per simulation and must not be entered from two threads at once.
  const int jobs = options.engine == "simgrid" ? 1 : options.jobs;
  std::mutex mutex;
  long done = 0;
  parallel_for(table.rows.size(), jobs, [&](std::size_t i) {
    v.rows[i] = validate_row(table.rows[i], table.path, options, clusters);
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
  return v;
}

}  // namespace zb::validate
