// The greedy ZB-V scheduler (Qi et al., arXiv version, section 6; what the official runtime runs):
// two chunks per device in a V, built pass by pass under a memory limit (docs/design.md section 16).
#pragma once

#include <optional>
#include <vector>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

// Whether the gap left before a backward (fill_b) or a forward (fill_f) may take one more W than
// fits in it, when the gap is larger than the device may still idle.
struct ZbVFill {
  bool before_b = true;
  bool before_f = true;
};

struct ZbVResult {
  Schedule schedule;
  double worst_bubble = 0;          // the largest per-device idle time after its first forward
  std::vector<double> bubble;       // per device
  double memory_limit = 0;          // the absolute limit the schedule respects
  ZbVFill fill;                     // of the winning candidate
};

// The absolute limit zb-v uses: `limit` when given, else the problem's, else p * M_B (1F1B's
// memory: 2p chunk activations).
double zb_v_memory_limit(const Problem& problem, std::optional<double> limit = std::nullopt);

// One candidate with its refinement (rerun with the last run's bubbles as the idle each device is
// allowed, while the worst bubble drops); nullopt when it runs out of memory.
std::optional<ZbVResult> zb_v_candidate(const Problem& problem, double memory_limit, ZbVFill fill);

// The four candidates (fill before B x fill before F, true first), the first strictly smallest
// worst bubble kept. Needs chunks 2 and the V placement (InputError otherwise); ScheduleError
// naming the limit when no candidate fits it.
ZbVResult zb_v_greedy(const Problem& problem, std::optional<double> memory_limit = std::nullopt);

}  // namespace zb
