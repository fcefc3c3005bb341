// The statistics validate prints: quantiles of relative errors and Spearman's rank correlation.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

namespace zb::validate {

// The q-quantile (0 <= q <= 1) by linear interpolation between order statistics: the value at
// position q*(n-1) of the sorted sample (Hyndman and Fan's type 7, numpy's and R's default).
// 0 for an empty sample.
double quantile(std::vector<double> values, double q);

// Relative errors e = predicted/measured - 1 of some rows: n, the median and 90th percentile of
// |e|, and the median of e (its sign is the bias: positive = predictions too fast).
struct ErrorSummary {
  int n = 0;
  double median_abs = 0;
  double p90_abs = 0;
  double median = 0;
};
ErrorSummary summarize_errors(const std::vector<double>& errors);
// {"n", "median_abs_error", "p90_abs_error", "median_error"}: a summary in every JSON report.
nlohmann::json error_summary_json(const ErrorSummary& summary);

// Ranks 1..n, ties given the average of the ranks they span.
std::vector<double> average_ranks(const std::vector<double>& values);

// Spearman's rho: Pearson's correlation of the average ranks. None for fewer than 2 pairs or a
// sample whose values are all equal (the correlation is undefined).
std::optional<double> spearman(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace zb::validate
