// Predicted (evaluator on the calibrated problem) versus measured spans and bubble rates.
#pragma once

#include <string>
#include <vector>

#include "sim/schedule/problem.h"
#include "sim/schedule/schedule.h"
#include "sim/schedule/trace.h"

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
};

// Measured values are medians over the steps, leaving out the first (warm-up) when there are more.
PredictionReport compare_prediction(const zb::Problem& calibrated, const zb::Schedule& schedule,
                                    const std::vector<zb::Trace>& measured_steps);

// A fixed-width table, one row per device plus a total row, times in ms.
std::string format_prediction(const PredictionReport& report);

}  // namespace zb::exec
