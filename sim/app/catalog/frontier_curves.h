// The memory frontier of a problem at several placements, and its JSON form: what `zbsim
// frontier` draws and prints and the Python module's frontier() returns.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/problem_spec.h"
#include "sim/solver/frontier.h"

namespace zb::catalog {

// One curve per placement, each at its natural chunk count (1 linear, 2 V, the spec's count or 2
// interleaved) with equal total work. The placements are the `chosen` names, else the one the
// spec chose, else one chunk per device beside the V (when the costs are per device, so both carry
// the same work). Everything is checked before the first (possibly long) solve: from > 0, step > 0,
// to >= from, a positive ILP time limit, the placement names, every problem; InputErrors name the
// flag (--from, --time-limit, --placements) or `source`.
std::vector<FrontierCurve> frontier_curves(const ProblemSpec& spec, std::string_view source,
                                           const std::optional<std::vector<std::string>>& chosen,
                                           const FrontierOptions& options);

// {"problem": {...}, "curves": [{"placement", "chunks", "frontier": [{"limit_times_p", "limit",
// "zb-auto": {...}, "zb-ilp"?: {...}}]}]}.
nlohmann::json frontier_json(const ProblemSpec& spec, const std::vector<FrontierCurve>& curves);

}  // namespace zb::catalog
