// The memory frontier: bubble rate of zb-auto (and optionally zb-ilp) against the memory limit,
// for one placement; curves of several placements share the axes (equal total work and M_B).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/core/problem.h"
#include "sim/solver/ilp_solver.h"

namespace zb {

struct FrontierOptions {
  double from_times_p = 1.0;   // first limit, in multiples of p * M_B
  double to_times_p = 3.0;     // last limit (inclusive)
  double step_times_p = 0.125; // p/8 of M_B per step
  bool with_ilp = false;
  double ilp_time_limit_s = 60;  // per point: zb-ilp's wall-clock safety net
};

struct FrontierPoint {
  double limit_times_p = 0;  // the limit as a multiple of p * M_B
  double limit = 0;          // absolute
  bool auto_feasible = true;
  double auto_span = 0;
  double auto_bubble_rate = 0;
  double auto_peak_memory = 0;   // largest device peak of the zb-auto order
  double work = 0;               // the bubble-rate denominator's work (Problem::work())
  std::optional<IlpResult> ilp;  // when with_ilp
  double ilp_bubble_rate = 0;
};

// One point per limit, from_times_p to to_times_p in step_times_p, zb-auto at the problem's own
// placement (auto_schedule). Infeasible points are rows with auto_feasible = false (and an
// infeasible ILP status), never exceptions. The ILP runs for one chunk per device only.
std::vector<FrontierPoint> memory_frontier(const Problem& problem, const FrontierOptions& options);

// One placement's frontier.
struct FrontierCurve {
  Placement placement = Placement::linear;
  int chunks = 1;
  std::vector<FrontierPoint> points;

  // "1 chunk per device", "V, 2 chunks", "interleaved, 3 chunks": the legend and table heading.
  std::string label() const;
};

}  // namespace zb
