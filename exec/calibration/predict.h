// Predicted (evaluator on the calibrated problem) versus measured spans, bubble rates and the
// steady-state step period.
#pragma once

#include <string>
#include <vector>

#include "exec/runtime/engine.h"
#include "sim/core/evaluator.h"
#include "sim/core/problem.h"
#include "sim/core/schedule.h"
#include "sim/core/trace.h"

namespace zb::exec {

struct DeviceComparison {
  double predicted_span = 0, measured_span = 0;      // end of last - start of first action
  double predicted_bubble = 0, measured_bubble = 0;  // (span - busy) / span of this device
};

struct PredictionReport {
  std::vector<DeviceComparison> devices;
  double predicted_span = 0, measured_span = 0;      // the largest device span
  double predicted_bubble = 0, measured_bubble = 0;  // docs/design.md section 3's bubble rate
  int measured_steps = 0;                            // steps the medians are taken over
  // The steady-state period (docs/design.md section 7): the time from one step's last action to
  // the next step's, optimizer step included. 0 with a single step.
  double predicted_period = 0, measured_period = 0;
  // The evaluator's period on this run's own pass costs (the mean per stage and pass over the
  // measured steps, zb::measured_costs) with the calibration's transfers and optimizer step:
  // predicted_period's error with the pass costs' drift taken out, i.e. the error of the model of
  // the pipeline alone. 0 with a single step or when the steps' passes cannot be costed.
  double replayed_period = 0;
  // Spreads, relative (robust_estimate.h): of the measured period's step-to-step gaps, and of the
  // calibrated costs on the busiest device (Calibration::relative_spread; 0 when the costs came
  // from a file). The error's spread is their root sum of squares.
  double measured_period_spread = 0;
  double calibration_spread = 0;
  std::vector<std::string> calibration_outliers;  // named, as calibration left them out
};

// The evaluator's options for a run: its steps and its optimizer mode as zbexec runs it
// (post-validation awaits the verdict before the next step, docs/design.md section 9).
zb::EvalOptions prediction_options(const ExecOptions& options);

// Measured spans and bubbles are medians over the steps, leaving out the first (warm-up) when
// there are more; the measured period is the robust estimate (robust_estimate.h) of the gaps
// between consecutive steps' last action ends (without the first gap when there are more), on one
// clock through `step_origins_ms`, its spread relative to it.
// The predicted period is the evaluator's over the same steps.
PredictionReport compare_prediction(const zb::Problem& calibrated, const zb::Schedule& schedule,
                                    const ExecOptions& options, const std::vector<zb::Trace>& measured_steps,
                                    const std::vector<double>& step_origins_ms);

// A fixed-width table, one row per device plus a total row and the period, times in ms.
std::string format_prediction(const PredictionReport& report);

}  // namespace zb::exec
