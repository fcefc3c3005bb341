// One rank's DualPipe step (see dualpipe_phases.h): the phase order of DeepSeek's reference.
#include "sim/core/generators/detail/dualpipe_phases.h"

#include <deque>

namespace zb {

namespace {

// One rank's list. Each phase's forwards and backwards take its microbatches in order; a split
// backward (B) leaves its W pending, and W runs the oldest pending one.
class DualRank {
 public:
  DualRank(std::vector<Action>& out, const DualPipePhases& phases) : out_(out), phases_(phases) {}

  void f(int phase) { out_.push_back({Pass::F, microbatch(phase, forwards_[phase]++), phases_.chunk[phase]}); }
  // A full backward (BW), or a split one (B now, its W later) once the tail starts to split.
  void backward(int phase, bool split) {
    const int mb = microbatch(phase, backwards_[phase]++);
    out_.push_back({split ? Pass::B : Pass::BW, mb, phases_.chunk[phase]});
    if (split) pending_w_.push_back({Pass::W, mb, phases_.chunk[phase]});
  }
  void w() {
    if (pending_w_.empty()) return;
    out_.push_back(pending_w_.front());
    pending_w_.pop_front();
  }
  // A forward of `forward_phase` overlapped with a full backward of the other phase.
  void f_and_bw(int forward_phase) {
    f(forward_phase);
    out_.back().overlap_next = true;
    backward(1 - forward_phase, false);
  }

 private:
  int microbatch(int phase, int index) const { return phases_.first_microbatch[phase] + index; }

  std::vector<Action>& out_;
  DualPipePhases phases_;
  int forwards_[2] = {0, 0};
  int backwards_[2] = {0, 0};
  std::deque<Action> pending_w_;
};

}  // namespace

void append_dualpipe_phases(std::vector<Action>& out, int ranks, int rank, int microbatches,
                            const DualPipePhases& phases) {
  DualRank d(out, phases);
  const int r = rank;
  const int down = ranks - r - 1;  // ranks after this one: how far phase 0 still has to go
  // Warm-up: phase-0 forwards, then forwards of both phases as phase 1's start to arrive.
  for (int k = 0; k < 2 * down; ++k) d.f(0);
  for (int k = 0; k <= r; ++k) {
    d.f(0);
    d.f(1);
  }
  // Phase 1's first backwards split, their W filling the wait for the next phase-1 input.
  for (int k = 0; k < down; ++k) {
    d.backward(1, true);
    d.w();
    d.f(1);
  }
  // Steady state: F0 with BW1, then F1 with BW0. The last rank runs its first F0 and BW1 one
  // after the other: a pair waits for both inputs, and that F can start before the phase-1
  // gradient arrives.
  for (int k = 0; k < microbatches - 2 * ranks + r + 1; ++k) {
    if (k == 0 && r == ranks - 1) {
      d.f(0);
      d.backward(1, false);
    } else {
      d.f_and_bw(0);
    }
    d.f_and_bw(1);
  }
  // Phase 0's forwards are done: phase-1 backwards alone, phase-1 forwards still paired.
  for (int k = 0; k < down; ++k) {
    d.backward(1, false);
    d.f_and_bw(1);
  }
  // Cool-down: the remaining backwards of both phases; from the middle on they split, and the W
  // fill the gaps of the drain.
  bool split = false;
  for (int k = 0; k <= r; ++k) {
    const bool middle = k == (r + 1) / 2;
    if (middle && r % 2 == 1) split = true;
    d.backward(1, split);
    if (middle && r % 2 == 0) split = true;
    d.backward(0, split);
  }
  for (int k = 0; k < down; ++k) {
    d.w();
    d.backward(0, split);
  }
  for (int k = 0; k <= r; ++k) d.w();
}

}  // namespace zb
