// Measured against simulated traces (see trace_comparison.h).
#include "sim/app/catalog/trace_comparison.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "sim/support/csv_field.h"
#include "sim/support/error.h"
#include "sim/core/measured_costs.h"

namespace zb::cli {

namespace {

double ms_per(const Trace& trace) { return seconds_per(trace.meta.time_unit) * 1e3; }

double device_bubble(const Metrics& metrics, std::size_t d) {
  const double span = metrics.device_span[d];
  return span > 0 ? (span - metrics.busy[d]) / span : 0.0;
}

// Rounding leaves differences of 1e-16; they should not print as "-0.000".
double clean(double value) { return std::abs(value) < 5e-10 ? 0.0 : value; }

std::string signed_percent(double fraction) { return fmt::format("{:+.1f}%", clean(100 * fraction)); }

const Difference& row_of(const TraceComparison& c, const std::string& metric, int device) {
  for (const Difference& row : c.rows) {
    if (row.metric == metric && row.device == device) return row;
  }
  throw Error("compare-trace: missing row " + metric);
}

}  // namespace

TraceComparison compare_traces(const Trace& measured, const std::string& measured_label, const Trace& simulated,
                               const std::string& simulated_label) {
  if (measured.devices != simulated.devices) {
    throw InputError(fmt::format("{} has {} devices, {} has {}: not the same pipeline", measured_label, measured.devices,
                                 simulated_label, simulated.devices));
  }
  for (const auto* side : {&measured, &simulated}) {
    for (std::size_t d = 0; d < side->metrics.busy.size(); ++d) {
      if (side->metrics.busy[d] <= 0) {
        throw InputError(fmt::format("{}: device {} has no compute span (for a torch.profiler run, give every rank's file)",
                                     side == &measured ? measured_label : simulated_label, d));
      }
    }
  }
  TraceComparison comparison;
  comparison.measured_label = measured_label;
  comparison.simulated_label = simulated_label;
  comparison.devices = measured.devices;
  const double m_ms = ms_per(measured), s_ms = ms_per(simulated);
  const Metrics& m = measured.metrics;
  const Metrics& s = simulated.metrics;
  for (std::size_t d = 0; d < static_cast<std::size_t>(measured.devices); ++d) {
    const int device = static_cast<int>(d);
    comparison.rows.push_back({"device_span", device, m.device_span[d] * m_ms, s.device_span[d] * s_ms});
    comparison.rows.push_back({"busy", device, m.busy[d] * m_ms, s.busy[d] * s_ms});
    comparison.rows.push_back({"bubble_rate", device, device_bubble(m, d), device_bubble(s, d)});
  }
  comparison.rows.push_back({"span", -1, m.span * m_ms, s.span * s_ms});
  comparison.rows.push_back({"makespan", -1, m.makespan * m_ms, s.makespan * s_ms});
  comparison.rows.push_back({"bubble_rate", -1, m.bubble_rate, s.bubble_rate});
  comparison.measured_costs = measured_cost_flags(measured);
  return comparison;
}

std::string measured_cost_flags(const Trace& measured) {
  const std::optional<MeasuredCosts> costs = measured_costs({&measured}, CostStatistic::median);
  if (!costs) return "";
  const auto list = [](const std::vector<double>& values) {
    std::vector<std::string> cells;
    for (const double value : values) cells.push_back(fmt::format("{:.3f}", value));
    return fmt::format("{}", fmt::join(cells, ","));
  };
  std::string text = fmt::format("--tf {} --tb {}", list(costs->t_f), list(costs->t_b));
  return text + (costs->split_backward ? " --tw " + list(costs->t_w) : " --tw 0");
}

std::string comparison_text(const TraceComparison& c, Format format) {
  if (format == Format::json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const Difference& row : c.rows) {
      nlohmann::json item = {{"metric", row.metric}};
      item["device"] = row.device >= 0 ? nlohmann::json(row.device) : nlohmann::json(nullptr);
      item["measured"] = row.measured;
      item["simulated"] = row.simulated;
      item["difference"] = clean(row.difference());
      item["relative"] = clean(row.relative());
      rows.push_back(std::move(item));
    }
    nlohmann::json out = {{"measured", c.measured_label}, {"simulated", c.simulated_label}, {"devices", c.devices},
                          {"time_unit", "ms"}, {"rows", std::move(rows)}};
    if (!c.measured_costs.empty()) out["measured_costs"] = c.measured_costs;
    return out.dump(2) + "\n";
  }
  if (format == Format::csv) {
    std::string out = "metric,device,measured,simulated,difference,relative\n";
    for (const Difference& row : c.rows) {
      out += fmt::format("{},{},{},{},{},{}\n", row.metric, row.device >= 0 ? fmt::format("{}", row.device) : "",
                         row.measured, row.simulated, clean(row.difference()), clean(row.relative()));
    }
    return out;
  }
  std::string out = fmt::format("measured:  {}\nsimulated: {}\n(difference = measured - simulated; % of simulated)\n\n",
                                c.measured_label, c.simulated_label);
  out += fmt::format("{:<8} {:>13} {:>13} {:>10} {:>8}   {:>11} {:>11}   {:>9} {:>9}\n", "device", "measured span",
                     "simul. span", "diff", "diff %", "meas. busy", "simul. busy", "meas. bub", "sim. bub");
  for (int d = 0; d < c.devices; ++d) {
    const Difference& span = row_of(c, "device_span", d);
    const Difference& busy = row_of(c, "busy", d);
    const Difference& bubble = row_of(c, "bubble_rate", d);
    out += fmt::format("{:<8} {:>10.3f} ms {:>10.3f} ms {:>+10.3f} {:>8}   {:>8.3f} ms {:>8.3f} ms   {:>8.1f}% {:>8.1f}%\n",
                       fmt::format("d{}", d), span.measured, span.simulated, clean(span.difference()),
                       signed_percent(span.relative()), busy.measured, busy.simulated, clean(100 * bubble.measured),
                       clean(100 * bubble.simulated));
  }
  out += "\n";
  for (const char* metric : {"span", "makespan"}) {
    const Difference& row = row_of(c, metric, -1);
    out += fmt::format("{:<12} {:>10.3f} ms (measured) {:>10.3f} ms (simulated) {:>+10.3f} ms {:>8}\n", metric,
                       row.measured, row.simulated, clean(row.difference()), signed_percent(row.relative()));
  }
  const Difference& bubble = row_of(c, "bubble_rate", -1);
  out += fmt::format("{:<12} {:>11.2f}% (measured) {:>11.2f}% (simulated) {:>+8.2f} points\n", "bubble rate",
                     clean(100 * bubble.measured), clean(100 * bubble.simulated), clean(100 * bubble.difference()));
  if (!c.measured_costs.empty()) out += fmt::format("\nmeasured costs (median per stage, ms): {}\n", c.measured_costs);
  return out;
}

}  // namespace zb::cli
