// Predicted (evaluator on the calibrated problem) versus measured spans and bubble rates.
#include "exec/predict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/schedule/evaluator.h"
#include "exec/median.h"

namespace zb::exec {

namespace {

double device_bubble(const zb::Metrics& metrics, std::size_t d) {
  const double span = metrics.device_span.at(d);
  return span > 0 ? (span - metrics.busy.at(d)) / span : 0.0;
}

}  // namespace

PredictionReport compare_prediction(const zb::Problem& calibrated, const zb::Schedule& schedule,
                                    const std::vector<zb::Trace>& measured_steps) {
  zb::EvalOptions eval_options;
  eval_options.record_transfers = false;
  const zb::Trace predicted = zb::evaluate(calibrated, schedule, eval_options);
  const std::size_t first = measured_steps.size() > 1 ? 1 : 0;
  PredictionReport report;
  report.measured_steps = static_cast<int>(measured_steps.size() - first);
  report.predicted_span = predicted.metrics.span;
  report.predicted_bubble = predicted.metrics.bubble_rate;
  std::vector<double> spans, bubbles;
  for (std::size_t k = first; k < measured_steps.size(); ++k) {
    spans.push_back(measured_steps[k].metrics.span);
    bubbles.push_back(measured_steps[k].metrics.bubble_rate);
  }
  report.measured_span = median(spans);
  report.measured_bubble = median(bubbles);
  for (std::size_t d = 0; d < static_cast<std::size_t>(calibrated.devices); ++d) {
    DeviceComparison row;
    row.predicted_span = predicted.metrics.device_span.at(d);
    row.predicted_bubble = device_bubble(predicted.metrics, d);
    std::vector<double> device_spans, device_bubbles;
    for (std::size_t k = first; k < measured_steps.size(); ++k) {
      device_spans.push_back(measured_steps[k].metrics.device_span.at(d));
      device_bubbles.push_back(device_bubble(measured_steps[k].metrics, d));
    }
    row.measured_span = median(device_spans);
    row.measured_bubble = median(device_bubbles);
    report.devices.push_back(row);
  }
  return report;
}

std::string format_prediction(const PredictionReport& report) {
  std::string out = fmt::format("{:<8} {:>16} {:>16} {:>8} {:>10} {:>10}\n", "device",
                                "predicted span", "measured span", "error", "pred bubble",
                                "meas bubble");
  // A bubble of -1e-17 (rounding in span - work) would print as "-0.0%".
  auto percent = [](double rate) { return std::abs(rate) < 1e-9 ? 0.0 : 100.0 * rate; };
  auto error = [](double predicted, double measured) {
    return measured > 0 ? fmt::format("{:+.1f}%", 100.0 * (predicted - measured) / measured)
                        : std::string("-");
  };
  for (std::size_t d = 0; d < report.devices.size(); ++d) {
    const auto& row = report.devices[d];
    out += fmt::format("{:<8} {:>13.3f} ms {:>13.3f} ms {:>8} {:>9.1f}% {:>9.1f}%\n", fmt::format("d{}", d),
                       row.predicted_span, row.measured_span, error(row.predicted_span, row.measured_span),
                       percent(row.predicted_bubble), percent(row.measured_bubble));
  }
  out += fmt::format("{:<8} {:>13.3f} ms {:>13.3f} ms {:>8} {:>9.1f}% {:>9.1f}%\n", "all",
                     report.predicted_span, report.measured_span,
                     error(report.predicted_span, report.measured_span),
                     percent(report.predicted_bubble), percent(report.measured_bubble));
  out += fmt::format("(measured: median over {} step(s); 'all' is the largest device span and the "
                     "bubble rate of docs/design.md section 3)\n", report.measured_steps);
  return out;
}

}  // namespace zb::exec
