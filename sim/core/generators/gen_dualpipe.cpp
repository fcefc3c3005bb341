// DualPipe (DeepSeek-V3's bidirectional pipeline): two model copies on p devices, the first m/2
// microbatches running down (stages 0..p-1) and the others up (stages p..2p-1). Device r and its
// mirror p-1-r run the same program: DeepSeek's reference runs on each rank the DualPipeV step of
// a pipeline of p/2 ranks at position min(r, p-1-r), whose phase 0 is the direction in which the
// rank sits in the first half (down for r < p/2, up otherwise).
#include <fmt/format.h>

#include <algorithm>

#include "sim/core/generators/detail/dualpipe_phases.h"
#include "sim/support/error.h"
#include "sim/core/generators/generators.h"

namespace zb {

Schedule make_dualpipe(const Problem& problem) {
  const int p = problem.devices;
  const int m = problem.microbatches;
  if (problem.chunks != 2 || problem.placement != Placement::bidirectional) {
    throw InputError(fmt::format("dualpipe: needs --chunks 2 --placement bidirectional, got chunks={} placement={}",
                                 problem.chunks, placement_name(problem.placement)));
  }
  if (p % 2 != 0) {
    throw InputError(fmt::format(
        "dualpipe: needs an even p (device r pairs with its mirror p-1-r, and the middle two meet), got p={}", p));
  }
  if (m % 2 != 0 || m < 2 * p) {
    throw InputError(fmt::format(
        "dualpipe: needs an even m >= 2p = {} (m/2 microbatches each way, at least one per stage of a copy's "
        "pipeline and its way back), got m={}",
        2 * p, m));
  }
  Schedule schedule = Schedule::empty("dualpipe", p);
  const int half = m / 2;
  for (int r = 0; r < p; ++r) {
    const bool second_half = r >= p / 2;
    DualPipePhases phases;
    phases.chunk[0] = second_half ? 1 : 0;  // chunk 0 is the down copy, chunk 1 the up copy
    phases.chunk[1] = 1 - phases.chunk[0];
    phases.first_microbatch[0] = second_half ? half : 0;
    phases.first_microbatch[1] = second_half ? 0 : half;
    append_dualpipe_phases(schedule.devices[r], p / 2, std::min(r, p - 1 - r), half, phases);
  }
  return schedule;
}

}  // namespace zb
