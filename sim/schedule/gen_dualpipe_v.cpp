// DualPipeV (DeepSeek's "cut-in-half" DualPipe; PyTorch's ScheduleDualPipeV): two chunks per
// device in a V, the steady state pairing a forward of one chunk with a full backward of the
// other as one overlapped block (Action::overlap_next), so that one's all-to-all hides under the
// other's compute. Reproduces PyTorch's order cell for cell (tests/data/pytorch).
#include <fmt/format.h>

#include <deque>

#include "sim/schedule/error.h"
#include "sim/schedule/generators.h"

namespace zb {

namespace {

// One device's list. Each chunk's forwards and backwards take microbatches 0, 1, 2, ... in order;
// a split backward (B) leaves its W pending, and W runs the oldest pending one.
class DualDevice {
 public:
  explicit DualDevice(std::vector<Action>& out) : out_(out) {}

  void f(int chunk) { out_.push_back({Pass::F, forwards_[chunk]++, chunk}); }
  // A full backward (BW), or a split one (B now, its W later) once the tail starts to split.
  void backward(int chunk, bool split) {
    const int mb = backwards_[chunk]++;
    out_.push_back({split ? Pass::B : Pass::BW, mb, chunk});
    if (split) pending_w_.push_back({Pass::W, mb, chunk});
  }
  void w() {
    if (pending_w_.empty()) return;
    out_.push_back(pending_w_.front());
    pending_w_.pop_front();
  }
  // A forward of `forward_chunk` overlapped with a full backward of the other chunk.
  void f_and_bw(int forward_chunk) {
    f(forward_chunk);
    out_.back().overlap_next = true;
    backward(1 - forward_chunk, false);
  }

 private:
  std::vector<Action>& out_;
  int forwards_[2] = {0, 0};
  int backwards_[2] = {0, 0};
  std::deque<Action> pending_w_;
};

}  // namespace

Schedule make_dualpipe_v(const Problem& problem) {
  require_vshape(problem, "dualpipe-v");
  const int p = problem.devices;
  const int m = problem.microbatches;
  if (m < 2 * p) {
    throw InputError(fmt::format("dualpipe-v: needs at least as many microbatches as stages (m >= 2p = {}), got m={}",
                                 2 * p, m));
  }
  Schedule schedule = Schedule::empty("dualpipe-v", p);
  for (int r = 0; r < p; ++r) {
    DualDevice d(schedule.devices[r]);
    const int down = p - r - 1;  // devices below this one: how far chunk 0 still has to go
    // Warm-up: chunk-0 forwards, then forwards of both chunks as chunk 1's start to arrive.
    for (int k = 0; k < 2 * down; ++k) d.f(0);
    for (int k = 0; k <= r; ++k) {
      d.f(0);
      d.f(1);
    }
    // Chunk 1's first backwards split, their W filling the wait for the next chunk-1 input.
    for (int k = 0; k < down; ++k) {
      d.backward(1, true);
      d.w();
      d.f(1);
    }
    // Steady state: F0 with BW1, then F1 with BW0. The last device runs its first F0 and BW1
    // one after the other: a pair waits for both inputs, and that F can start before the chunk-1
    // gradient arrives.
    for (int k = 0; k < m - 2 * p + r + 1; ++k) {
      if (k == 0 && r == p - 1) {
        d.f(0);
        d.backward(1, false);
      } else {
        d.f_and_bw(0);
      }
      d.f_and_bw(1);
    }
    // Chunk 0's forwards are done: chunk-1 backwards alone, chunk-1 forwards still paired.
    for (int k = 0; k < down; ++k) {
      d.backward(1, false);
      d.f_and_bw(1);
    }
    // Cool-down: the remaining backwards of both chunks; from the middle on they split, and the
    // W fill the gaps of the drain.
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
  return schedule;
}

}  // namespace zb
