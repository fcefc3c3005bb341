// The median of a sample (0 for none): what calibration keeps per pass, prediction per step and a
// measured trace per stage's pass.
#pragma once

#include <algorithm>
#include <vector>

namespace zb {

inline double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

}  // namespace zb
