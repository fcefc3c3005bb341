// Quantiles, ranks and Spearman's rho, as numpy and scipy.stats.spearmanr compute them.
#include "sim/app/validate/error_stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace zb::validate {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double position = std::clamp(q, 0.0, 1.0) * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return values[below] + fraction * (values[above] - values[below]);
}

ErrorSummary summarize_errors(const std::vector<double>& errors) {
  ErrorSummary summary;
  summary.n = static_cast<int>(errors.size());
  std::vector<double> magnitudes;
  for (double e : errors) magnitudes.push_back(std::abs(e));
  summary.median_abs = quantile(magnitudes, 0.5);
  summary.p90_abs = quantile(magnitudes, 0.9);
  summary.median = quantile(errors, 0.5);
  return summary;
}

nlohmann::json error_summary_json(const ErrorSummary& s) {
  return {{"n", s.n}, {"median_abs_error", s.median_abs}, {"p90_abs_error", s.p90_abs}, {"median_error", s.median}};
}

std::vector<double> average_ranks(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  std::vector<double> ranks(values.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && values[order[j + 1]] == values[order[i]]) ++j;
    const double rank = 0.5 * static_cast<double>(i + j) + 1;  // the mean of ranks i+1 .. j+1
    for (std::size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

std::optional<double> spearman(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return std::nullopt;
  const std::vector<double> rx = average_ranks(x);
  const std::vector<double> ry = average_ranks(y);
  const double mean = 0.5 * static_cast<double>(x.size() + 1);  // the mean of any set of ranks 1..n
  double sxy = 0;
  double sxx = 0;
  double syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  if (sxx == 0 || syy == 0) return std::nullopt;
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace zb::validate
