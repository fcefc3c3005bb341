// The lane rule: how the intervals of one stream of one device (concurrent transfers, a measured
// stream whose work overlapped) are spread over rows so that no two on one row overlap.
#pragma once

#include <vector>

namespace zb {

struct LaneInterval {
  double start = 0;
  double end = 0;
};

// lane[i] for each interval: taken in order of start (ties in input order), each goes on the
// lowest lane free at its start, where a lane is free once its last interval has ended (an
// interval may start where the previous one ends). Uses as many lanes as the most intervals
// open at one moment, the fewest possible; deterministic.
std::vector<int> assign_lanes(const std::vector<LaneInterval>& intervals);

}  // namespace zb
