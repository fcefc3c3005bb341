// Median, scaled MAD and the modified z-score's outliers.
#include "exec/calibration/detail/robust_estimate.h"

#include <cmath>

#include "sim/support/median.h"

namespace zb::exec {

RobustEstimate robust_estimate(const std::vector<double>& samples) {
  RobustEstimate estimate;
  if (samples.empty()) return estimate;
  const double center = median(samples);
  std::vector<double> deviations;
  for (const double x : samples) deviations.push_back(std::abs(x - center));
  const double mad = median(deviations);
  std::vector<double> kept;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    const bool outlier = mad > 0 ? 0.6745 * deviations[i] / mad > kOutlierScore : deviations[i] > 0;
    if (outlier) {
      estimate.outliers.push_back(i);
    } else {
      kept.push_back(samples[i]);
    }
  }
  estimate.value = median(kept);
  estimate.spread = 1.4826 * mad;
  return estimate;
}

}  // namespace zb::exec
