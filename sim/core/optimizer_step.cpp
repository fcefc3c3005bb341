// The optimizer step between training steps: the norm all-reduce, ready times, the period.
#include "sim/core/optimizer_step.h"

#include <algorithm>

namespace zb {

std::string_view optimizer_mode_name(OptimizerMode mode) {
  return mode == OptimizerMode::sync ? "sync" : "post_validation";
}

OptimizerMode normal_optimizer_mode(const Schedule& schedule) {
  for (const auto& actions : schedule.devices) {
    for (const Action& action : actions) {
      if (action.pass == Pass::B || action.pass == Pass::W) return OptimizerMode::post_validation;
    }
  }
  return OptimizerMode::sync;
}

bool needs_weight_grad_starts(const Problem& problem) { return !problem.t_dp_reduce.empty(); }

double gradients_ready(const Problem& problem, int device, double last_end,
                       const std::vector<double>& last_weight_grad_start) {
  if (!needs_weight_grad_starts(problem)) return last_end;
  std::vector<std::pair<double, int>> starts;  // (start of the stage's last W or BW, stage)
  for (int c = 0; c < problem.chunks; ++c) {
    const int s = problem.stage_of(device, c);
    starts.emplace_back(last_weight_grad_start[static_cast<std::size_t>(s)], s);
  }
  std::sort(starts.begin(), starts.end());
  const double overlap = problem.dp_reduce_overlap;
  double stream = 0;  // when the device's communication stream is free
  double after = 0;   // the reductions' part that waits for the last pass
  for (const auto& [start, stage] : starts) {
    stream = std::max(stream, start) + overlap * problem.dp_reduce_time(stage);
    after += (1 - overlap) * problem.dp_reduce_time(stage);
  }
  return std::max(last_end, stream) + after;
}

std::vector<std::pair<int, int>> all_reduce_hops(const Problem& problem) {
  std::vector<std::pair<int, int>> hops;
  for (int s = problem.stages() - 2; s >= 0; --s) {
    const int from = problem.device_of_stage(s + 1);
    const int to = problem.device_of_stage(s);
    if (from != to) hops.emplace_back(from, to);
  }
  const int root = problem.device_of_stage(0);
  for (int d = 0; d < problem.devices; ++d) {
    if (d != root) hops.emplace_back(root, d);
  }
  return hops;
}

StepBoundary step_boundary(const Problem& problem, const std::vector<double>& gradients_ready,
                           const OptimizerStep& optimizer) {
  const int stages = problem.stages();
  const double hop = problem.t_reduce_hop;
  // The partial sum leaves stage s once stage s's device has its gradients and stage s+1's
  // partial has arrived.
  double partial = 0;
  for (int s = stages - 1; s >= 0; --s) {
    const int device = problem.device_of_stage(s);
    const double own = gradients_ready[static_cast<std::size_t>(device)];
    if (s == stages - 1) {
      partial = own;
    } else {
      const bool crosses = problem.device_of_stage(s + 1) != device;
      partial = std::max(own, partial + (crosses ? hop : 0.0));
    }
  }
  const int root = problem.device_of_stage(0);
  StepBoundary boundary;
  for (int d = 0; d < problem.devices; ++d) {
    const auto index = static_cast<std::size_t>(d);
    const double verdict = partial + (d == root ? 0.0 : hop);
    const double t_opt = problem.optimizer_time(d);
    const double early = gradients_ready[index] + t_opt;
    boundary.verdict.push_back(verdict);
    if (optimizer.mode == OptimizerMode::sync) {
      boundary.ready.push_back(verdict + t_opt);
    } else if (optimizer.rollback) {
      boundary.ready.push_back(std::max(early, verdict) + t_opt);
    } else {
      boundary.ready.push_back(optimizer.await_verdict ? std::max(early, verdict) : early);
    }
  }
  return boundary;
}

double steady_step_time(const std::vector<double>& step_ends) {
  if (step_ends.empty()) return 0;
  if (step_ends.size() == 1) return step_ends.front();
  return (step_ends.back() - step_ends.front()) / static_cast<double>(step_ends.size() - 1);
}

double expected_post_validation_time(double no_rollback, double every_rollback, double rollback_rate) {
  return (1 - rollback_rate) * no_rollback + rollback_rate * every_rollback;
}

}  // namespace zb
