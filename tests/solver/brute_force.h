// Exhaustive search over in-order schedules of tiny problems: the oracle for the ILP tests.
#pragma once

#include <functional>
#include <limits>
#include <vector>

#include "sim/schedule/error.h"
#include "sim/solver/list_timing.h"
#include "sim/schedule/problem.h"
#include "sim/schedule/schedule.h"

namespace zb::test {

// Every per-device order that keeps microbatch order within F, B and W, F < B < W per microbatch,
// and order-based memory within `limit`.
inline std::vector<std::vector<Action>> stage_orders(const Problem& problem, int s, double limit) {
  const int m = problem.microbatches;
  const auto si = static_cast<std::size_t>(s);
  std::vector<std::vector<Action>> out;
  std::vector<Action> current;
  std::function<void(int, int, int, double)> walk = [&](int nf, int nb, int nw, double memory) {
    if (nw == m) {
      out.push_back(current);
      return;
    }
    if (nf < m && memory + problem.mem_f[si] <= limit + 1e-9) {
      current.push_back({Pass::F, nf, 0});
      walk(nf + 1, nb, nw, memory + problem.mem_f[si]);
      current.pop_back();
    }
    if (nb < nf) {
      current.push_back({Pass::B, nb, 0});
      walk(nf, nb + 1, nw, memory + problem.mem_b[si]);
      current.pop_back();
    }
    if (nw < nb) {
      current.push_back({Pass::W, nw, 0});
      walk(nf, nb, nw + 1, memory + problem.mem_w[si]);
      current.pop_back();
    }
  };
  walk(0, 0, 0, 0.0);
  return out;
}

// The smallest list-scheduled span over all combinations (infinity when none fits).
inline double brute_force_span(const Problem& problem, double limit) {
  std::vector<std::vector<std::vector<Action>>> options;
  for (int s = 0; s < problem.devices; ++s) options.push_back(stage_orders(problem, s, limit));
  double best = std::numeric_limits<double>::infinity();
  Schedule schedule;
  schedule.devices.resize(static_cast<std::size_t>(problem.devices));
  std::function<void(int)> pick = [&](int s) {
    if (s == problem.devices) {
      try {
        best = std::min(best, list_timing(problem, schedule).span);
      } catch (const ScheduleError&) {
        // deadlocking combination
      }
      return;
    }
    for (const auto& order : options[static_cast<std::size_t>(s)]) {
      schedule.devices[static_cast<std::size_t>(s)] = order;
      pick(s + 1);
    }
  };
  pick(0);
  return best;
}

}  // namespace zb::test
