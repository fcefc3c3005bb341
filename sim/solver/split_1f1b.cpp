// 1F1B's order with B and W split, in-flight forwards capped by the limit (see split_1f1b.h).
#include "sim/solver/detail/split_1f1b.h"

#include <algorithm>
#include <vector>

#include "sim/core/memory.h"

namespace zb {

std::optional<Split1f1b> split_1f1b(const Problem& problem, double limit) {
  const int p = problem.devices;
  const int m = problem.microbatches;
  Split1f1b result;
  result.schedule = Schedule::empty("split-1f1b", p);
  int above = m;  // the in-flight count of the device above
  for (int d = 0; d < p; ++d) {
    // With k forwards in flight a device peaks at the end of a B (k forwards held plus what the B
    // allocates) or, when B frees memory, while its k-th forward runs.
    const double forward = memory_delta(problem, Pass::F, d).at_start;
    const double backward = std::max(0.0, memory_delta(problem, Pass::B, d).at_end);
    int k = std::min({p - d, m, above});
    while (k > 0 && !fits_limit(k * forward + backward, limit)) --k;
    if (k == 0) return std::nullopt;
    result.accepted_level = std::max(result.accepted_level, k * forward + backward);
    above = k;
    auto& actions = result.schedule.devices[static_cast<std::size_t>(d)];
    actions.reserve(static_cast<std::size_t>(3 * m));
    for (int i = 0; i < k; ++i) actions.push_back({Pass::F, i, 0});
    for (int i = 0; i < m; ++i) {
      actions.push_back({Pass::B, i, 0});
      actions.push_back({Pass::W, i, 0});
      if (k + i < m) actions.push_back({Pass::F, k + i, 0});
    }
  }
  return result;
}

}  // namespace zb
