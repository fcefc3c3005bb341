// The lane rule (trace_lanes.h): greedy interval partitioning, lowest free lane first.
#include "sim/formats/detail/trace_lanes.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <queue>
#include <set>
#include <utility>

namespace zb {

std::vector<int> assign_lanes(const std::vector<LaneInterval>& intervals) {
  std::vector<std::size_t> order(intervals.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return intervals[a].start < intervals[b].start; });
  std::vector<int> lane(intervals.size(), 0);
  std::set<int> free_lanes;
  // Busy lanes by the end of their last interval, earliest first.
  using Busy = std::pair<double, int>;
  std::priority_queue<Busy, std::vector<Busy>, std::greater<>> busy;
  int lanes = 0;
  for (std::size_t i : order) {
    const LaneInterval& interval = intervals[i];
    while (!busy.empty() && busy.top().first <= interval.start) {
      free_lanes.insert(busy.top().second);
      busy.pop();
    }
    int chosen = lanes;
    if (!free_lanes.empty()) {
      chosen = *free_lanes.begin();
      free_lanes.erase(free_lanes.begin());
    } else {
      ++lanes;
    }
    lane[i] = chosen;
    busy.push({std::max(interval.start, interval.end), chosen});
  }
  return lane;
}

}  // namespace zb
