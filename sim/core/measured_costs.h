// The pass costs a measured run shows: per stage, the median or mean duration of each of its
// passes. The median becomes zbsim's cost flags (compare-trace: a typical pass); the mean replays a
// run in the evaluator (zbexec --predict: a device's time is the sum of its passes, and a slow
// pass of a busy machine counts in that sum though a median would leave it out).
#pragma once

#include <optional>
#include <vector>

#include "sim/core/trace.h"

namespace zb {

struct MeasuredCosts {
  // Per stage, in ms. A run of full backwards measured no W of its own: its backward is t_b and
  // t_w is 0, so that t_b + t_w and the work (docs/design.md section 3) are what ran.
  std::vector<double> t_f, t_b, t_w;
  bool split_backward = true;  // B and W were measured apart
};

enum class CostStatistic { median, mean };

// The compute spans of every trace given (e.g. the steps of one run). Empty when there are none,
// or when a stage lacks a pass the others have (the stages are then not one schedule's).
std::optional<MeasuredCosts> measured_costs(const std::vector<const Trace*>& traces, CostStatistic statistic);

}  // namespace zb
