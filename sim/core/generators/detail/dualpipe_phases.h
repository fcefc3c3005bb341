// The eight phases of one rank's step in DeepSeek's DualPipe family, shared by DualPipeV (one
// pipeline folded into a V) and DualPipe (two pipelines in opposite directions): both run the
// same program on a rank, over two "phases" (the pipeline the rank meets early, and the one it
// meets late), and differ only in which chunk and microbatches a phase is.
#pragma once

#include <vector>

#include "sim/core/action.h"

namespace zb {

// What a phase is on this rank: its chunk and the microbatch its first forward runs (each phase
// takes its microbatches first, first + 1, ... in order).
struct DualPipePhases {
  int chunk[2] = {0, 1};
  int first_microbatch[2] = {0, 0};
};

// Appends one rank's list: `ranks` ranks in the pipeline (DualPipeV: p; DualPipe: p/2, its half),
// `rank` this rank's position in it (DualPipe: min(r, p-1-r)), `microbatches` per phase (m >= 2 *
// ranks). Forwards of phase 0 fill the warm-up, then F&B pairs (Action::overlap_next: a forward
// of one phase with a full backward of the other) fill the steady state; the cool-down splits
// backwards from its middle on and lets the W fill the drain.
void append_dualpipe_phases(std::vector<Action>& out, int ranks, int rank, int microbatches,
                            const DualPipePhases& phases);

}  // namespace zb
