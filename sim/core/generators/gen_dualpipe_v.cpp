// DualPipeV (DeepSeek's "cut-in-half" DualPipe; PyTorch's ScheduleDualPipeV): two chunks per
// device in a V, the steady state pairing a forward of one chunk with a full backward of the
// other as one overlapped block (Action::overlap_next), so that one's all-to-all hides under the
// other's compute. Reproduces PyTorch's order cell for cell (tests/data/pytorch).
#include <fmt/format.h>

#include "sim/core/generators/detail/dualpipe_phases.h"
#include "sim/support/error.h"
#include "sim/core/generators/generators.h"

namespace zb {

Schedule make_dualpipe_v(const Problem& problem) {
  require_vshape(problem, "dualpipe-v");
  const int p = problem.devices;
  const int m = problem.microbatches;
  if (m < 2 * p) {
    throw InputError(fmt::format("dualpipe-v: needs at least as many microbatches as stages (m >= 2p = {}), got m={}",
                                 2 * p, m));
  }
  Schedule schedule = Schedule::empty("dualpipe-v", p);
  // The V is one pipeline of p ranks whose phase 0 is chunk 0 (down the V) and phase 1 chunk 1.
  for (int r = 0; r < p; ++r) append_dualpipe_phases(schedule.devices[r], p, r, m, DualPipePhases{});
  return schedule;
}

}  // namespace zb
