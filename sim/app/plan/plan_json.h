// The JSON of a recommend search: what `zbsim recommend --format json` prints and zbsim.recommend()
// returns (python/src/module.cpp), one owner of its keys.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "sim/app/plan/plan_search.h"

namespace zb::plan {

// {model, hardware, cluster, gpus, global_batch, seq_len, device_GB, search {candidates,
// pruned_memory, pruned_bound, evaluated, over_limit, unsupported}, top [...], pareto [...]}.
nlohmann::json plan_search_json(const PlanSearch& search);

}  // namespace zb::plan
