// Predicted (evaluator on the calibrated problem) versus measured spans, bubbles and period.
#include "exec/calibration/predict.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/core/measured_costs.h"
#include "sim/core/optimizer_step.h"
#include "sim/support/median.h"
#include "exec/calibration/detail/robust_estimate.h"

namespace zb::exec {

namespace {

double device_bubble(const zb::Metrics& metrics, std::size_t d) {
  const double span = metrics.device_span.at(d);
  return span > 0 ? (span - metrics.busy.at(d)) / span : 0.0;
}

// The measured period: gaps between consecutive steps' last compute ends on one clock.
RobustEstimate measured_period(const std::vector<zb::Trace>& steps, const std::vector<double>& origins_ms) {
  std::vector<double> gaps;
  for (std::size_t k = steps.size() > 2 ? 2 : 1; k < steps.size(); ++k) {
    gaps.push_back(origins_ms.at(k) + steps[k].metrics.makespan - origins_ms.at(k - 1) -
                   steps[k - 1].metrics.makespan);
  }
  return robust_estimate(gaps);
}

// The evaluator's period with every stage's pass costs replaced by the measured ones (0 when
// there are none to take).
double replayed_period(const zb::Problem& calibrated, const zb::Schedule& schedule, const zb::EvalOptions& options,
                       const std::vector<zb::Trace>& steps, std::size_t first) {
  std::vector<const zb::Trace*> measured;
  for (std::size_t k = first; k < steps.size(); ++k) measured.push_back(&steps[k]);
  const std::optional<zb::MeasuredCosts> costs = zb::measured_costs(measured, zb::CostStatistic::mean);
  if (!costs || costs->t_f.size() != calibrated.t_f.size()) return 0;
  zb::Problem replay = calibrated;
  const double per_ms = 1e-3 / zb::seconds_per(calibrated.time_unit);
  for (std::size_t s = 0; s < costs->t_f.size(); ++s) {
    replay.t_f[s] = costs->t_f[s] * per_ms;
    replay.t_b[s] = costs->t_b[s] * per_ms;
    replay.t_w[s] = costs->t_w[s] * per_ms;
    replay.t_bw[s] = replay.t_b[s] + replay.t_w[s];
  }
  return zb::steady_step_time(zb::evaluate(replay, schedule, options).step_ends);
}

}  // namespace

zb::EvalOptions prediction_options(const ExecOptions& options) {
  zb::EvalOptions eval;
  eval.steps = options.steps;
  if (options.mode == SyncMode::post_validation) {
    eval.optimizer = {zb::OptimizerMode::post_validation, false, true};
  }
  return eval;
}

PredictionReport compare_prediction(const zb::Problem& calibrated, const zb::Schedule& schedule,
                                    const ExecOptions& options, const std::vector<zb::Trace>& measured_steps,
                                    const std::vector<double>& step_origins_ms) {
  zb::EvalOptions eval_options = prediction_options(options);
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
  if (measured_steps.size() > 1) {
    report.predicted_period = zb::steady_step_time(predicted.step_ends);
    const RobustEstimate period = measured_period(measured_steps, step_origins_ms);
    report.measured_period = period.value;
    report.measured_period_spread = period.value > 0 ? period.spread / period.value : 0.0;
    report.replayed_period = replayed_period(calibrated, schedule, eval_options, measured_steps, first);
  }
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
  if (report.measured_period > 0) {
    const double spread = std::hypot(report.calibration_spread, report.measured_period_spread);
    out += fmt::format("{:<8} {:>13.3f} ms {:>13.3f} ms {:>8} +/- {:.1f}% (spread: calibration {:.1f}%, measured "
                       "period {:.1f}%)\n",
                       "period", report.predicted_period, report.measured_period,
                       error(report.predicted_period, report.measured_period), 100 * spread,
                       100 * report.calibration_spread, 100 * report.measured_period_spread);
  }
  if (report.measured_period > 0 && report.replayed_period > 0) {
    out += fmt::format("{:<8} {:>13.3f} ms {:>13.3f} ms {:>8} (the evaluator on this run's own mean pass times: the "
                       "model's error without the passes' drift from the calibration)\n",
                       "replayed", report.replayed_period, report.measured_period,
                       error(report.replayed_period, report.measured_period));
  }
  for (const std::string& outlier : report.calibration_outliers) out += "calibration outlier left out: " + outlier + "\n";
  out += fmt::format("(measured: median over {} step(s); 'all' is the largest device span and the "
                     "bubble rate of docs/design.md section 3; 'period' the steady-state step time, "
                     "step end to step end, optimizer step included)\n", report.measured_steps);
  return out;
}

}  // namespace zb::exec
