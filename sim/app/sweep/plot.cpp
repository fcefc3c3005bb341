// Choosing what to draw from a results table: which inputs vary, one series per label, one colour
// per schedule in every chart.
#include "sim/app/sweep/plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>

#include "sim/support/error.h"

namespace zb::sweep {

namespace {

const char* kind_name(ChartKind kind) {
  switch (kind) {
    case ChartKind::bubble: return "bubble";
    case ChartKind::throughput: return "throughput";
    case ChartKind::memory: return "memory";
    case ChartKind::all: break;
  }
  return "all";
}

// Inputs that can tell series apart (the axes of a sweep are among them).
std::vector<std::string> key_columns(const Table& table) {
  std::vector<std::string> keys;
  // Extra axis columns sit between "point" and "model".
  const int model = table.column("model");
  for (int c = 1; c < model; ++c) keys.push_back(table.columns[c]);
  for (const char* name : {"model", "hardware", "cluster", "microbatch_size", "p", "m", "placement", "engine",
                           "mem_limit"}) {
    if (table.column(name) >= 0) keys.push_back(name);
  }
  return keys;
}

std::optional<double> to_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

struct Plotter {
  const Table& table;
  std::vector<std::size_t> rows;  // status ok, after --where
  std::vector<std::string> varying;

  // "zb-h1, model=gpt-1.5b" for the inputs that vary, leaving out `skip`.
  std::string series_label(std::size_t row, const std::vector<std::string>& skip) const {
    std::string label = table.cell(row, "schedule");
    for (const auto& key : varying) {
      if (std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
      label += fmt::format(", {}={}", key, table.cell(row, key));
    }
    return label;
  }

  std::vector<Series> series(const std::string& x, const std::string& y, const std::vector<std::string>& skip) const {
    std::vector<Series> out;
    std::map<std::string, std::size_t> index;
    for (std::size_t r : rows) {
      const auto xv = to_number(table.cell(r, x));
      const auto yv = to_number(table.cell(r, y));
      if (!xv || !yv) continue;
      const std::string label = series_label(r, skip);
      const auto [it, inserted] = index.emplace(label, out.size());
      if (inserted) out.push_back({label, {}});
      out[it->second].points.emplace_back(*xv, *yv);
    }
    return out;
  }
};

}  // namespace

ChartKind parse_chart_kind(const std::string& text) {
  for (const ChartKind kind : {ChartKind::bubble, ChartKind::throughput, ChartKind::memory, ChartKind::all}) {
    if (text == kind_name(kind)) return kind;
  }
  throw InputError(fmt::format("--chart: unknown chart '{}' (expected bubble, throughput, memory or all)", text));
}

Plot plot_results(const Table& table, const std::string& path, const PlotOptions& options) {
  for (const char* needed : {"point", "schedule", "status", "m", "bubble_rate", "peak_memory"}) {
    if (table.column(needed) < 0) {
      throw InputError(fmt::format("{}: no column '{}': not a results file of zbsim sweep", path, needed));
    }
  }
  std::vector<std::pair<std::string, std::string>> where;
  for (const auto& item : options.where) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || table.column(item.substr(0, eq)) < 0) {
      throw InputError(fmt::format("--where: '{}': expected COLUMN=VALUE with a column of {}", item, path));
    }
    where.emplace_back(item.substr(0, eq), item.substr(eq + 1));
  }
  Plotter plot{table, {}, {}};
  std::size_t skipped = 0;
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    bool keep = true;
    for (const auto& [key, value] : where) keep = keep && table.cell(r, key) == value;
    if (!keep) continue;
    if (table.cell(r, "status") != "ok") {
      ++skipped;
      continue;
    }
    plot.rows.push_back(r);
  }
  if (plot.rows.empty()) throw InputError(fmt::format("{}: no rows with status ok to plot", path));
  for (const auto& key : key_columns(table)) {
    for (std::size_t r : plot.rows) {
      if (table.cell(r, key) != table.cell(plot.rows.front(), key)) {
        plot.varying.push_back(key);
        break;
      }
    }
  }
  const std::string left_out = skipped ? fmt::format("; {} rows not ok left out", skipped) : "";
  const ChartKind kind = options.kind;
  const bool all = kind == ChartKind::all;

  std::vector<Chart> charts;
  if (all || kind == ChartKind::bubble) {
    Chart chart;
    chart.title = "Bubble rate vs microbatches";
    chart.subtitle = fmt::format("{}: {} rows{}", path, plot.rows.size(), left_out);
    chart.x_label = "microbatches m";
    chart.y_label = "bubble rate";
    chart.y_percent = true;
    chart.x_log2 = true;
    chart.series = plot.series("m", "bubble_rate", {"m"});
    std::set<double> ms;
    for (const auto& s : chart.series) {
      for (const auto& point : s.points) ms.insert(point.first);
    }
    if (!chart.series.empty() && (ms.size() > 1 || kind == ChartKind::bubble)) charts.push_back(std::move(chart));
  }
  if (all || kind == ChartKind::throughput) {
    Chart chart;
    chart.title = "Throughput vs memory limit";
    chart.subtitle = "samples per second per GPU = m x microbatch size / step time / p";
    chart.x_label = "activation memory limit (absolute, memory units of the problem)";
    chart.y_label = "samples / s / GPU";
    chart.series = plot.series("mem_limit_abs", "samples_per_s_per_gpu", {"mem_limit"});
    std::set<double> limits;
    for (const auto& s : chart.series) {
      for (const auto& point : s.points) limits.insert(point.first);
    }
    // Only worth drawing when the limit is swept (a limit derived per model is no axis).
    const bool swept = std::find(plot.varying.begin(), plot.varying.end(), "mem_limit") != plot.varying.end();
    if (!chart.series.empty() && ((swept && limits.size() > 1) || kind == ChartKind::throughput)) {
      charts.push_back(std::move(chart));
    }
  }
  if (all || kind == ChartKind::memory) {
    // The configuration of the last ok row (all inputs but the schedule), one bar per device.
    const std::size_t last = plot.rows.back();
    Chart chart;
    std::string config;
    for (const auto& key : plot.varying) config += fmt::format("{}{}={}", config.empty() ? "" : ", ", key, table.cell(last, key));
    chart.title = "Peak activation memory per device";
    chart.subtitle = config.empty() ? std::string("every schedule of the sweep") : "at " + config;
    chart.x_label = "device";
    chart.y_label = "peak activation memory";
    chart.bars = true;
    std::optional<double> limit;
    for (std::size_t r : plot.rows) {
      bool same = true;
      for (const auto& key : plot.varying) same = same && table.cell(r, key) == table.cell(last, key);
      if (!same) continue;
      Series s{table.cell(r, "schedule"), {}};
      const std::string& peaks = table.cell(r, "peak_memory");
      std::size_t start = 0;
      for (int d = 0; start <= peaks.size(); ++d) {
        const auto end = std::min(peaks.find(';', start), peaks.size());
        if (const auto v = to_number(peaks.substr(start, end - start))) s.points.emplace_back(d, *v);
        start = end + 1;
      }
      if (const auto l = to_number(table.cell(r, "mem_limit_abs"))) limit = *l;
      chart.series.push_back(std::move(s));
    }
    if (limit) {
      chart.y_reference = limit;
      chart.y_reference_label = fmt::format("memory limit {:.4g}", *limit);
    }
    if (!chart.series.empty()) charts.push_back(std::move(chart));
  }
  // One colour per schedule in every chart when the series are just schedules.
  std::vector<std::string> schedules;
  for (std::size_t r : plot.rows) {
    const std::string& name = table.cell(r, "schedule");
    if (std::find(schedules.begin(), schedules.end(), name) == schedules.end()) schedules.push_back(name);
  }
  for (auto& chart : charts) {
    for (auto& s : chart.series) {
      const auto it = std::find(schedules.begin(), schedules.end(), s.label);
      if (it != schedules.end()) s.color = static_cast<int>(it - schedules.begin());
    }
  }
  if (charts.empty()) throw InputError(fmt::format("{}: nothing to draw for --chart {}", path, kind_name(kind)));
  return {std::move(charts), plot.rows.size()};
}

}  // namespace zb::sweep
