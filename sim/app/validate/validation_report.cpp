// The three forms of a validation.
#include "sim/app/validate/validation_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>

#include "sim/support/csv_field.h"

namespace zb::validate {

bool memory_model_disagrees(const RowResult& r) { return r.covered() && r.memory_GB > r.memory_capacity_GB; }

namespace {

std::string percent(double fraction) { return fmt::format("{:+.1f}%", 100 * fraction); }
std::string magnitude(double fraction) { return fmt::format("{:.1f}%", 100 * fraction); }

std::string summary_line(const std::string& key, const ErrorSummary& s) {
  return fmt::format("  {:<34} {:>4}  {:>10}  {:>9}  {:>9}\n", key, s.n, magnitude(s.median_abs), magnitude(s.p90_abs),
                     percent(s.median));
}

std::string summary_header(const std::string& by) {
  return fmt::format("  {:<34} {:>4}  {:>10}  {:>9}  {:>9}\n", by, "n", "median |e|", "p90 |e|", "median e");
}

int counted(const Validation& v) {
  int n = 0;
  for (const RowResult& r : v.rows) n += r.counts() ? 1 : 0;
  return n;
}

std::string status_of(const RowResult& r) {
  if (!r.covered()) return "uncovered";
  return r.excluded.empty() ? "counted" : "excluded";
}

}  // namespace

std::string validation_table(const Validation& v) {
  const int rows = static_cast<int>(v.rows.size());
  const int n = counted(v);
  std::string t = fmt::format("zbsim validate: {} on the {}, {} cost model\n", v.path,
                              v.engine == "simgrid" ? "SimGrid engine" : "evaluator", models::cost_model_name(v.cost_model));
  t += fmt::format("rows {}, predicted {} ({:.1f}%), counted {} ({} left out of the statistics), uncovered {}\n\n", rows,
                   v.covered, rows ? 100.0 * v.covered / rows : 0.0, n, v.covered - n, rows - v.covered);
  t += "error of tokens/s per GPU, e = predicted / measured - 1 (positive: predicted too fast)\n";
  t += summary_header("");
  t += summary_line("all counted rows", v.overall);
  t += fmt::format("  source-balanced median |e| (the median of the sources' medians): {}\n", magnitude(v.source_balanced_median_abs));
  for (const auto& [by, summaries] : v.by) {
    t += "\n" + summary_header("by " + by);
    for (const SummaryRow& s : summaries) t += summary_line(s.key, s.errors);
  }
  t += "\nrank agreement within a model on one kind of cluster: Spearman rho of predicted vs measured tokens/s per GPU\n";
  t += fmt::format("  {:>4}  {:>6}  {}\n", "n", "rho", "group (model shape | GPU interconnect)");
  for (const RankGroup& g : v.ranks) {
    t += fmt::format("  {:>4}  {:>6}  {}{}\n", g.n, g.rho ? fmt::format("{:.2f}", *g.rho) : "-", g.key,
                     g.n >= kRankGroupMinimum ? "" : "  (fewer than 5 rows)");
  }
  t += "\nMFU (model FLOPs / the 16-bit peak): the best measured and predicted per GPU and GEMM rate\n";
  t += fmt::format("  {:<16} {:<9} {:>4} {:>14} {:>15} {:>26}\n", "gpu", "GEMM rate", "n", "best measured",
                   "best predicted", "predictions above measured");
  for (const MfuCeiling& c : v.mfu_ceilings) {
    t += fmt::format("  {:<16} {:<9} {:>4} {:>13.1f}% {:>14.1f}% {:>26}\n", c.gpu, c.rate, c.n,
                     100 * c.best_measured, 100 * c.best_predicted, c.above);
  }
  t += fmt::format("\n{:<6} {:<5} {:<26} {:<14} {:<9} {:<7} {:>10} {:>10} {:>8} {:>9} {:>6} {:>10}\n", "id", "src",
                   "model", "gpu", "precision", "zbsim", "measured", "predicted", "e", "step (s)", "MFU", "memory GB");
  t += fmt::format("{:<6} {:<5} {:<26} {:<14} {:<9} {:<7} {:>10} {:>10} {:>8} {:>9} {:>6} {:>10}\n", "", "", "", "", "",
                   "", "tok/s/GPU", "tok/s/GPU", "", "", "", "(cap.)");
  int memory_disagreements = 0;
  for (const RowResult& r : v.rows) {
    if (!r.covered()) continue;
    const bool over = memory_model_disagrees(r);
    memory_disagreements += over ? 1 : 0;
    t += fmt::format("{:<6} {:<5} {:<26} {:<14} {:<9} {:<7} {:>10.1f} {:>10.1f} {:>8} {:>9.3f} {:>5.1f}% {:>10}{}\n", r.id,
                     r.source, r.model.substr(0, 26), r.gpu, r.precision, r.generator, *r.measured, *r.predicted,
                     percent(r.error()), r.step_time_s, 100 * r.mfu,
                     fmt::format("{:.1f}{}", r.memory_GB, over ? fmt::format(">{:.0f}", r.memory_capacity_GB) : ""),
                     r.excluded.empty() ? "" : "  (not counted: " + r.excluded + ")");
  }
  t += fmt::format("memory: the model's peak per GPU; '>' marks {} rows it says would not fit, though they ran\n",
                   memory_disagreements);
  std::map<std::string, int> reasons;
  for (const RowResult& r : v.rows) {
    for (const std::string& reason : r.uncovered) ++reasons[reason.substr(0, reason.find(':'))];
  }
  t += fmt::format("\nuncovered rows: {} (a row may have several reasons)\n", rows - v.covered);
  std::vector<std::pair<int, std::string>> ordered;
  for (const auto& [reason, count] : reasons) ordered.emplace_back(-count, reason);
  std::sort(ordered.begin(), ordered.end());
  for (const auto& [count, reason] : ordered) t += fmt::format("  {:>4}  {}\n", -count, reason);
  for (const RowResult& r : v.rows) {
    if (!r.covered()) t += fmt::format("  {:<6} {}\n", r.id, fmt::join(r.uncovered, "; "));
  }
  t += "\nassumptions (what a covered row's columns did not give):\n";
  for (const RowResult& r : v.rows) {
    if (r.covered() && !r.assumptions.empty()) t += fmt::format("  {:<6} {}\n", r.id, fmt::join(r.assumptions, "; "));
  }
  return t;
}

nlohmann::json validation_json(const Validation& v) {
  nlohmann::json out;
  out["measured"] = v.path;
  out["engine"] = v.engine;
  out["cost_model"] = models::cost_model_name(v.cost_model);
  out["rows_total"] = v.rows.size();
  out["rows_predicted"] = v.covered;
  out["rows_counted"] = counted(v);
  out["all"] = error_summary_json(v.overall);
  out["source_balanced_median_abs_error"] = v.source_balanced_median_abs;
  for (const auto& [by, summaries] : v.by) {
    nlohmann::json list = nlohmann::json::array();
    for (const SummaryRow& s : summaries) {
      nlohmann::json entry = error_summary_json(s.errors);
      entry[by] = s.key;
      list.push_back(entry);
    }
    out["by_" + by] = list;
  }
  out["rank_groups"] = nlohmann::json::array();
  for (const RankGroup& g : v.ranks) {
    out["rank_groups"].push_back({{"group", g.key}, {"n", g.n}, {"spearman", g.rho ? nlohmann::json(*g.rho) : nlohmann::json()}});
  }
  out["mfu_ceilings"] = nlohmann::json::array();
  for (const MfuCeiling& c : v.mfu_ceilings) {
    out["mfu_ceilings"].push_back({{"gpu", c.gpu}, {"gemm_rate", c.rate}, {"n", c.n},
                                   {"best_measured_mfu", c.best_measured}, {"best_predicted_mfu", c.best_predicted},
                                   {"predictions_above_best_measured", c.above}});
  }
  out["rows"] = nlohmann::json::array();
  for (const RowResult& r : v.rows) {
    nlohmann::json row{{"id", r.id},           {"line", r.line},         {"source", r.source},
                       {"model", r.model},     {"gpu", r.gpu},           {"precision", r.precision},
                       {"schedule", r.schedule}, {"zbsim_schedule", r.generator}, {"group", r.group},
                       {"status", status_of(r)}, {"uncovered", r.uncovered}, {"assumptions", r.assumptions}};
    if (r.measured) {
      row["measured_tokens_per_s_per_gpu"] = *r.measured;
      row["measured_from"] = r.measured_how;
    }
    if (!r.excluded.empty()) row["excluded"] = r.excluded;
    if (r.covered()) {
      row["predicted_tokens_per_s_per_gpu"] = *r.predicted;
      row["error"] = r.error();
      row["step_time_s"] = r.step_time_s;
      row["mfu"] = r.mfu;
      row["memory_GB"] = r.memory_GB;
      row["memory_capacity_GB"] = r.memory_capacity_GB;
    }
    out["rows"].push_back(row);
  }
  return out;
}

std::string validation_csv(const Validation& v) {
  std::string t =
      "id,line,source,model,gpu,precision,schedule,zbsim_schedule,status,measured_tokens_per_s_per_gpu,"
      "predicted_tokens_per_s_per_gpu,error,step_time_s,mfu,memory_GB,memory_capacity_GB,group,excluded,uncovered,"
      "assumptions\n";
  for (const RowResult& r : v.rows) {
    const auto number = [&](double value) { return r.covered() ? fmt::format("{:.6g}", value) : std::string(); };
    t += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", csv_field(r.id), r.line,
                     csv_field(r.source), csv_field(r.model), csv_field(r.gpu), csv_field(r.precision),
                     csv_field(r.schedule), csv_field(r.generator), status_of(r),
                     r.measured ? fmt::format("{:.6g}", *r.measured) : "", number(r.predicted.value_or(0)),
                     number(r.covered() ? r.error() : 0), number(r.step_time_s), number(r.mfu), number(r.memory_GB),
                     number(r.memory_capacity_GB), csv_field(r.group), csv_field(r.excluded),
                     csv_field(fmt::format("{}", fmt::join(r.uncovered, "; "))),
                     csv_field(fmt::format("{}", fmt::join(r.assumptions, "; "))));
  }
  return t;
}

}  // namespace zb::validate
