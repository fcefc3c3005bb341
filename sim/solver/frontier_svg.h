// An SVG plot of the memory frontier: bubble rate against the memory limit.
#pragma once

#include <string>
#include <vector>

#include "sim/solver/frontier.h"

namespace zb {

// Lines for zb-auto of each placement and (when present) zb-ilp, the ILP's proven bound as a
// dashed line, x in multiples of p * M_B, y in percent. Deterministic text for the same input.
std::string frontier_svg(const std::vector<FrontierCurve>& curves, const std::string& title);

}  // namespace zb
