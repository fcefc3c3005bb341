// An SVG plot of the memory frontier: bubble rate against the memory limit.
#pragma once

#include <string>
#include <vector>

#include "sim/solver/frontier.h"

namespace zb {

// Fixed schedules drawn beside the curves (zbsim frontier --offload): each point a schedule's
// peak memory (x, multiples of p * M_B) and bubble rate (y, percent), joined in order.
struct FrontierMarks {
  std::string label;
  std::vector<std::pair<double, double>> points;
};

// Lines for zb-auto of each placement and (when present) zb-ilp, the ILP's proven bound as a
// dashed line, and the marks' lines with square markers, x in multiples of p * M_B, y in percent.
// Deterministic text for the same input.
std::string frontier_svg(const std::vector<FrontierCurve>& curves, const std::string& title,
                         const std::vector<FrontierMarks>& marks = {});

}  // namespace zb
