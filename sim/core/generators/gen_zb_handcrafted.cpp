// ZB-H1 and ZB-H2: 1F1B with the backward split, W deferred into the idle slots.
#include <algorithm>

#include "sim/core/generators/generators.h"

namespace zb {

namespace {

// Device r: depth*(p-r-1) warm-up forwards; then per microbatch i the next forward (if any), B_i,
// and once i >= depth*r the oldest pending W; the deferred W go at the tail.
Schedule make_zb_handcrafted(const Problem& problem, int depth, const char* name) {
  const int p = problem.devices;
  const int m = problem.microbatches;
  Schedule schedule = Schedule::empty(name, p);
  for (int r = 0; r < p; ++r) {
    auto& actions = schedule.devices[r];
    actions.reserve(3 * static_cast<std::size_t>(m));
    int next_f = 0;
    int next_w = 0;
    const int warmup = std::min(depth * (p - r - 1), m);
    while (next_f < warmup) actions.push_back({Pass::F, next_f++, 0});
    for (int i = 0; i < m; ++i) {
      if (next_f < m) actions.push_back({Pass::F, next_f++, 0});
      actions.push_back({Pass::B, i, 0});
      if (i >= depth * r) actions.push_back({Pass::W, next_w++, 0});
    }
    while (next_w < m) actions.push_back({Pass::W, next_w++, 0});
  }
  return schedule;
}

}  // namespace

Schedule make_zb_h1(const Problem& problem) { return make_zb_handcrafted(problem, 1, "zb-h1"); }
Schedule make_zb_h2(const Problem& problem) { return make_zb_handcrafted(problem, 2, "zb-h2"); }

}  // namespace zb
