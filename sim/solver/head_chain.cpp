// The forward-and-back chain a device waits for before its first backward.
#include "sim/solver/head_chain.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace zb {

namespace {

// B's time on stage s: the cheaper of B and, where given, the combined BW.
double backward_time(const Problem& problem, int s) {
  double backward = problem.t_b[static_cast<std::size_t>(s)];
  if (static_cast<std::size_t>(s) < problem.t_bw.size())
    backward = std::min(backward, problem.t_bw[static_cast<std::size_t>(s)]);
  return backward;
}

}  // namespace

double return_trip(const Problem& problem, int stage) {
  double trip = problem.t_f[static_cast<std::size_t>(stage)];
  for (int k = stage + 1; k < problem.stages(); ++k) {
    const auto ki = static_cast<std::size_t>(k);
    trip += problem.t_f[ki] + problem.t_b[ki] + 2 * problem.comm_after(k - 1);
  }
  return trip;
}

double head_chain(const Problem& problem, int device) {
  std::vector<StagePath> paths = {problem.path(0)};
  if (problem.microbatches > 1 && problem.path(problem.microbatches - 1).first != paths[0].first) {
    paths.push_back(problem.path(problem.microbatches - 1));
  }
  double least = std::numeric_limits<double>::infinity();
  for (const StagePath& path : paths) {
    std::vector<int> mine;  // d's stages on this path, ascending
    for (int s = path.first; s <= path.last; ++s) {
      if (problem.device_of_stage(s) == device) mine.push_back(s);
    }
    if (mine.empty()) continue;
    double forward = 0;  // s0's forward through the last stage
    for (int s = mine.front(); s <= path.last; ++s) {
      forward += problem.t_f[static_cast<std::size_t>(s)];
      if (s < path.last) forward += problem.comm_after(s);
    }
    for (const int target : mine) {
      double backward = 0;  // from the last stage back to target + 1, and the transfer into target
      for (int s = target + 1; s <= path.last; ++s) backward += backward_time(problem, s) + problem.comm_after(s - 1);
      least = std::min(least, forward + backward);
    }
  }
  return std::isfinite(least) ? least : 0;
}

}  // namespace zb
