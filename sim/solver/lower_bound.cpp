// The head lower bound: forwards are all a stage can run before its first gradient comes back.
#include "lower_bound.h"

#include <algorithm>
#include <cmath>

namespace zb {

SpanLowerBound span_lower_bound(const Problem& problem, double memory_limit) {
  const int p = problem.stages();
  const int m = problem.microbatches;
  auto at = [](const std::vector<double>& values, int s) { return values[static_cast<std::size_t>(s)]; };
  SpanLowerBound bound;
  bound.stage_bound.assign(static_cast<std::size_t>(p), 0.0);
  bound.head_idle.assign(static_cast<std::size_t>(p), 0.0);
  // Walk up from the last stage, accumulating the round trip below each stage.
  double below = 0;  // sum over k > s of (t_f + t_b) plus 2 transfers per boundary at or below s
  for (int s = p - 1; s >= 0; --s) {
    if (s + 1 < p) below += at(problem.t_f, s + 1) + at(problem.t_b, s + 1) + 2 * problem.comm_after(s);
    const double head = at(problem.t_f, s) + below;
    double fit = m;
    const double mem_f = at(problem.mem_f, s);
    if (memory_limit >= 0 && mem_f > 0) fit = std::min<double>(m, std::floor(memory_limit / mem_f + 1e-9));
    fit = std::max(fit, 1.0);
    const double idle = std::max(0.0, head - fit * at(problem.t_f, s));
    const double work = m * (at(problem.t_f, s) + at(problem.t_b, s) + at(problem.t_w, s));
    bound.head_idle[static_cast<std::size_t>(s)] = idle;
    bound.stage_bound[static_cast<std::size_t>(s)] = work + idle;
    bound.span = std::max(bound.span, work + idle);
  }
  return bound;
}

}  // namespace zb
