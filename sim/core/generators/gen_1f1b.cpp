// 1F1B: warm-up forwards, then alternate one forward and one fused backward, then drain.
#include <algorithm>

#include "sim/core/generators/generators.h"

namespace zb {

Schedule make_1f1b(const Problem& problem) {
  const int p = problem.devices;
  const int m = problem.microbatches;
  Schedule schedule = Schedule::empty("1f1b", p);
  for (int r = 0; r < p; ++r) {
    auto& actions = schedule.devices[r];
    const int warmup = std::min(p - r - 1, m);
    for (int mb = 0; mb < warmup; ++mb) actions.push_back({Pass::F, mb, 0});
    for (int i = 0; i < m - warmup; ++i) {
      actions.push_back({Pass::F, warmup + i, 0});
      actions.push_back({Pass::BW, i, 0});
    }
    for (int mb = m - warmup; mb < m; ++mb) actions.push_back({Pass::BW, mb, 0});
  }
  return schedule;
}

}  // namespace zb
