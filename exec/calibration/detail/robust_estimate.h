// A robust summary of repeated timings: what calibration keeps per pass and what prediction
// reports with its error (docs/design.md section 9).
#pragma once

#include <cstddef>
#include <vector>

namespace zb::exec {

// The modified z-score above which a sample is an outlier (Iglewicz and Hoaglin, "How to Detect
// and Handle Outliers", 1993: |0.6745 (x - median) / MAD| > 3.5).
inline constexpr double kOutlierScore = 3.5;

struct RobustEstimate {
  double value = 0;   // the median of the samples that are not outliers
  double spread = 0;  // 1.4826 x the median absolute deviation: the standard deviation for normal
                      // noise, unmoved by a few wild samples
  std::vector<std::size_t> outliers;  // indices of the samples left out, in order
};

// 0 for no samples. With a MAD of 0 (most samples equal) any other sample is an outlier.
RobustEstimate robust_estimate(const std::vector<double>& samples);

}  // namespace zb::exec
