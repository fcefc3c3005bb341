// Below the zb-auto frontier: fixed schedules with 0..v of their chunks offloaded to host memory,
// and PipeOffload's PO-H and PO-F, as points on the frontier's axes (peak memory in multiples of
// p * M_B, bubble rate): what `zbsim frontier --offload` adds.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "sim/app/catalog/scenario.h"

namespace zb::catalog {

struct OffloadPoint {
  int offload_chunks = 0;  // chunks per device offloaded by the pass (po-h, po-f: their own choice, -1)
  int chunks = 1;
  std::string status;      // a result row's: ok, over-limit, unsupported, infeasible
  std::string reason;
  double peak_times_p = 0;  // the largest device peak / (p * M_B)
  double bubble_rate = 0;
  double span = 0;
};

// One schedule's points, fewest offloaded chunks first.
struct OffloadSeries {
  std::string schedule;
  std::vector<OffloadPoint> points;
};

// 1f1b, zb-h1, 1f1b-i, gis-h, zb-v, v-half, v-min with 0..v chunks offloaded (--offload-chunks),
// and po-h, po-f. The scenario must give a copy time (t_offload, or a model with a host link):
// an InputError naming --offload otherwise.
std::vector<OffloadSeries> offload_series(const Scenario& scenario);

// [{"schedule", "points": [{"offload_chunks", "chunks", "status", "peak_times_p", "bubble_rate", "span"}]}].
nlohmann::json offload_json(const std::vector<OffloadSeries>& series);

}  // namespace zb::catalog
