// What a schedule holds on each stage at the moments that can be its peak, for layer partitioning
// (models/layer_partition.h): a schedule's order fixes them whatever the split.
#pragma once

#include <vector>

#include "models/layer_partition.h"
#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb::catalog {

// Per stage, the moments (after every action of its device) that can be its peak: the pairs no
// other pair dominates, sorted.
std::vector<std::vector<models::InFlight>> in_flight_per_stage(const Problem& problem, const Schedule& schedule);

}  // namespace zb::catalog
