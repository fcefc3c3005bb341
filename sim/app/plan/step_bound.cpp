// The step-time lower bound of recommend's search, and why no schedule beats it.
//
// Device d's step, in any optimizer mode, runs from its first action a to g(d) >= its last
// action's end, then the update t_opt(d); its next step starts no earlier (optimizer_step.h). From
// the second step on every step repeats the one before shifted by the period P (docs/design.md
// section 7, pinned there for every generator), so P >= span(d) + t_opt(d) for every d, where
// span(d) = g(d) - a. The rollback mode and the expected post-validation period are never shorter.
//
// span(d) >= busy(d) + the time d must idle. busy(d) is every F and min(B + W, BW) of d's stages
// (at overlap 0 a device runs one pass at a time). The idle is the ramp: any B or BW on d, at a
// stage s' of a microbatch's path, needs that microbatch's forward from s0, the first of d's
// stages on the path (it runs on d, so it starts at a or later), through the path's last stage,
// and the backward back from there to s' + 1, the transfers between devices included (the
// engines add comm_after(s) to every cross-device input). So no B or BW starts on d before
// a + C(d), C(d) the least such chain over d's stages and the paths through them (head_chain,
// sim/solver/head_chain.h); W needs its B.
// Until then d can only run forwards: at most F(d), all its forwards, and, within a memory limit
// L, at most L * max over its stages of t_f / mem_f, because an F allocates its activations when
// it starts and nothing on d frees memory before a backward ends (memory.h), so the forwards
// started before a + C(d), which precede d's first B or BW in its order (every step runs the same
// order), hold their memory together, and an ok row (judged on the first step) keeps that within L. Hence
// span(d) >= busy(d) + C(d) - min(C(d), F(d), L * ratio(d)).
//
// The bound is the largest busy(d) + idle(d) + t_opt(d). A schedule with W deferred to fill the
// cool-down (the zero-bubble family) still meets it: the argument is about the head only. The
// search's exhaustive tests (tests/app/plan/test_plan_search.cpp, test_step_bound.cpp) check it
// against every generator's evaluated step time.
#include "sim/app/plan/detail/step_bound.h"

#include <algorithm>

#include "sim/core/memory.h"
#include "sim/solver/head_chain.h"

namespace zb::plan {

StepBound step_time_bound(const Problem& problem) {
  StepBound out;
  const std::optional<double> limit = problem.memory_limit();
  for (int d = 0; d < problem.devices; ++d) {
    double busy = 0, forwards = 0;
    double ratio = 0;  // the most forward time per unit of activation memory on d
    bool every_forward_allocates = true;
    for (int c = 0; c < problem.chunks; ++c) {
      const int s = problem.stage_of(d, c);
      const int through = problem.microbatches_through(s);
      if (through == 0) continue;
      double backward = problem.t_b[s] + problem.t_w[s];
      if (static_cast<std::size_t>(s) < problem.t_bw.size()) backward = std::min(backward, problem.t_bw[s]);
      busy += through * (problem.t_f[s] + backward);
      forwards += through * problem.t_f[s];
      const double mem = static_cast<std::size_t>(s) >= problem.mem_f.size() ? 0 : memory_delta(problem, Pass::F, s).at_start;
      if (mem > 0) ratio = std::max(ratio, problem.t_f[s] / mem);
      else every_forward_allocates = false;
    }
    out.compute = std::max(out.compute, busy);
    const double chain = head_chain(problem, d);
    double fill = std::min(chain, forwards);
    // fits_limit's tolerance: a peak of the limit times (1 + 1e-9) is still ok.
    if (limit && every_forward_allocates) fill = std::min(fill, *limit * (1 + 1e-9) * ratio);
    out.bound = std::max(out.bound, busy + (chain - fill) + problem.optimizer_time(d));
  }
  if (problem.overlap > 0) out.bound = 0;
  return out;
}

}  // namespace zb::plan
