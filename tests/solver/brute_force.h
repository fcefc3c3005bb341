// Exhaustive search over in-order schedules of tiny problems: the oracle for the ILP tests.
#pragma once

#include <functional>
#include <limits>
#include <vector>

#include "sim/support/error.h"
#include "sim/solver/detail/list_timing.h"
#include "sim/core/problem.h"
#include "sim/core/schedule.h"

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

// Every per-device order with F < B < W per microbatch and order-based memory within `limit`,
// microbatches in any order: the whole space the lower bound must hold over.
inline std::vector<std::vector<Action>> any_stage_orders(const Problem& problem, int s, double limit) {
  const int m = problem.microbatches;
  const auto si = static_cast<std::size_t>(s);
  const double delta[3] = {problem.mem_f[si], problem.mem_b[si], problem.mem_w[si]};
  std::vector<std::vector<Action>> out;
  std::vector<Action> current;
  std::vector<int> done(static_cast<std::size_t>(m), 0);  // passes done per microbatch
  std::function<void(double)> walk = [&](double memory) {
    if (static_cast<int>(current.size()) == 3 * m) {
      out.push_back(current);
      return;
    }
    for (int i = 0; i < m; ++i) {
      int& next = done[static_cast<std::size_t>(i)];
      if (next == 3) continue;
      const double after = memory + delta[next];
      if (delta[next] > 0 && after > limit + 1e-9) continue;
      current.push_back({next == 0 ? Pass::F : next == 1 ? Pass::B : Pass::W, i, 0});
      ++next;
      walk(after);
      --next;
      current.pop_back();
    }
  };
  walk(0.0);
  return out;
}

// The smallest list-scheduled span over every combination of the given per-stage orders.
inline double best_span_over(const Problem& problem, const std::vector<std::vector<std::vector<Action>>>& options) {
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

// The smallest list-scheduled span over in-order combinations (infinity when none fits).
inline double brute_force_span(const Problem& problem, double limit) {
  std::vector<std::vector<std::vector<Action>>> options;
  for (int s = 0; s < problem.devices; ++s) options.push_back(stage_orders(problem, s, limit));
  return best_span_over(problem, options);
}

// The same over every order, microbatches in any order on each device.
inline double any_order_span(const Problem& problem, double limit) {
  std::vector<std::vector<std::vector<Action>>> options;
  for (int s = 0; s < problem.devices; ++s) options.push_back(any_stage_orders(problem, s, limit));
  return best_span_over(problem, options);
}

}  // namespace zb::test
