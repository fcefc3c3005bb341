// The decimal time grid of the solvers (see time_grid.h).
#include "sim/solver/detail/time_grid.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/support/error.h"

namespace zb {

namespace {

// 10^k, exact for |k| <= 22 when k >= 0 (the factor the ticks are scaled by); built by
// multiplication so it does not depend on the libm's pow.
double power_of_ten(int k) {
  double value = 1;
  for (int i = 0; i < std::abs(k); ++i) value *= 10;
  return value;
}

constexpr int kDigits = 9;  // grid steps below the largest cost's leading digit

}  // namespace

TimeGrid::TimeGrid(const Problem& problem) {
  double largest = 0;
  for (const auto* costs : {&problem.t_f, &problem.t_b, &problem.t_w, &problem.t_comm}) {
    for (double cost : *costs) largest = std::max(largest, std::abs(cost));
  }
  // The nudge keeps 0.001 (a hair above or below in binary) in the decade of 1e-3, as 1 us is.
  const int decade = largest > 0 ? static_cast<int>(std::floor(std::log10(largest) + 1e-12)) : 0;
  exponent_ = decade - kDigits;
}

Ticks TimeGrid::ticks(double time) const {
  // One correctly rounded operation by an exact power of ten: a decimal with ten significant
  // digits lands exactly on its integer.
  const double scaled = exponent_ <= 0 ? time * power_of_ten(-exponent_) : time / power_of_ten(exponent_);
  if (!std::isfinite(scaled) || std::abs(scaled) > 9e17) {
    throw InputError(fmt::format("solver: time {} is too large for the time grid (step {:g})", time, step()));
  }
  return std::llround(scaled);
}

double TimeGrid::time(Ticks ticks) const {
  const double value = static_cast<double>(ticks);
  return exponent_ <= 0 ? value / power_of_ten(-exponent_) : value * power_of_ten(exponent_);
}

double TimeGrid::step() const { return time(1); }

StageTicks stage_ticks(const Problem& problem, const TimeGrid& grid) {
  StageTicks costs;
  for (int s = 0; s < problem.stages(); ++s) {
    const auto i = static_cast<std::size_t>(s);
    costs.f.push_back(grid.ticks(problem.t_f[i]));
    costs.b.push_back(grid.ticks(problem.t_b[i]));
    costs.w.push_back(grid.ticks(problem.t_w[i]));
    costs.comm_after.push_back(grid.ticks(problem.comm_after(s)));
  }
  return costs;
}

Problem on_grid(const Problem& problem, const TimeGrid& grid) {
  Problem scaled = problem;
  for (auto* costs : {&scaled.t_f, &scaled.t_b, &scaled.t_w, &scaled.t_bw, &scaled.t_comm}) {
    for (double& cost : *costs) cost = static_cast<double>(grid.ticks(cost));
  }
  return scaled;
}

}  // namespace zb
