// zbsim plot: SVG charts from a sweep's results CSV (bubble rate vs m, throughput vs memory
// limit, peak memory per device).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>

#include "sim/schedule/atomic_file.h"
#include "sim/cli/commands.h"
#include "sim/schedule/error.h"
#include "sim/cli/problem_options.h"
#include "sim/cli/sweep_chart.h"
#include "sim/cli/sweep_table.h"

namespace zb::cli {

namespace po = boost::program_options;

namespace {

// Inputs that can tell series apart (the axes of a sweep are among them).
std::vector<std::string> key_columns(const SweepTable& table) {
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
  const SweepTable& table;
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

  std::vector<ChartSeries> series(const std::string& x, const std::string& y, const std::vector<std::string>& skip) const {
    std::vector<ChartSeries> out;
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

int run_plot(int argc, char** argv) {
  po::options_description options("Plot");
  options.add_options()
      ("results", po::value<std::string>(), "results CSV written by zbsim sweep (also the first positional argument)")
      ("svg", po::value<std::string>(), "SVG file to write")
      ("chart", po::value<std::string>()->default_value("all"), "bubble | throughput | memory | all")
      ("where", po::value<std::vector<std::string>>()->composing(), "keep rows with COLUMN=VALUE (repeatable)");
  po::options_description all = options;
  all.add_options()("help,h", "show this help");
  po::positional_options_description positional;
  positional.add("results", 1);
  po::variables_map values;
  po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), values);
  if (values.count("help")) {
    std::cout << "usage: zbsim plot RESULTS.csv --svg OUT.svg [--chart bubble|throughput|memory|all] [--where COL=VALUE]\n\n"
              << all
              << "\nexample:\n  zbsim sweep --grid scenarios/sweeps/bubble-vs-m.json --out r.csv\n"
                 "  zbsim plot r.csv --svg r.svg\n";
    return 0;
  }
  po::notify(values);
  if (!values.count("results")) throw InputError("missing the results file (zbsim plot RESULTS.csv --svg OUT.svg)");
  if (!values.count("svg")) throw InputError("--svg: missing (the SVG file to write)");
  const std::string path = values["results"].as<std::string>();
  const std::string chart_kind = values["chart"].as<std::string>();
  if (chart_kind != "bubble" && chart_kind != "throughput" && chart_kind != "memory" && chart_kind != "all") {
    throw InputError(fmt::format("--chart: unknown chart '{}' (expected bubble, throughput, memory or all)", chart_kind));
  }
  const SweepTable table = read_sweep_table(path);
  for (const char* needed : {"point", "schedule", "status", "m", "bubble_rate", "peak_memory"}) {
    if (table.column(needed) < 0) {
      throw InputError(fmt::format("{}: no column '{}': not a results file of zbsim sweep", path, needed));
    }
  }
  std::vector<std::pair<std::string, std::string>> where;
  if (values.count("where")) {
    for (const auto& item : values["where"].as<std::vector<std::string>>()) {
      const auto eq = item.find('=');
      if (eq == std::string::npos || table.column(item.substr(0, eq)) < 0) {
        throw InputError(fmt::format("--where: '{}': expected COLUMN=VALUE with a column of {}", item, path));
      }
      where.emplace_back(item.substr(0, eq), item.substr(eq + 1));
    }
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

  std::vector<Chart> charts;
  if (chart_kind == "all" || chart_kind == "bubble") {
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
    if (!chart.series.empty() && (ms.size() > 1 || chart_kind == "bubble")) charts.push_back(std::move(chart));
  }
  if (chart_kind == "all" || chart_kind == "throughput") {
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
    if (!chart.series.empty() && ((swept && limits.size() > 1) || chart_kind == "throughput")) {
      charts.push_back(std::move(chart));
    }
  }
  if (chart_kind == "all" || chart_kind == "memory") {
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
      ChartSeries s{table.cell(r, "schedule"), {}};
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
  if (charts.empty()) throw InputError(fmt::format("{}: nothing to draw for --chart {}", path, chart_kind));
  write_file_atomically(values["svg"].as<std::string>(), render_charts(charts));
  fmt::print("plot: {} chart{} from {} rows of {} -> {}\n", charts.size(), charts.size() == 1 ? "" : "s",
             plot.rows.size(), path, values["svg"].as<std::string>());
  return 0;
}

}  // namespace zb::cli
