// The handcrafted ZB-V (Qi et al., arXiv version, section 6): two chunks per device in a V, zero
// bubble with equal costs at 1F1B's activation memory.
#include <algorithm>
#include <vector>

#include "sim/core/generators/generators.h"

namespace zb {

namespace {

// One device's list. Each (chunk, pass) takes its microbatches in order 0, 1, 2, ...; the list is
// built for `n` = max(2p-1, m) microbatches (the pattern needs that many to be complete) and the
// caller drops those >= m.
class VDevice {
 public:
  explicit VDevice(std::vector<Action>& out) : out_(out) {}
  void f(int chunk) { emit(Pass::F, chunk, f_[chunk]); }
  void b(int chunk) { emit(Pass::B, chunk, b_[chunk]); }
  void w(int chunk) { emit(Pass::W, chunk, w_[chunk]); }
  int forwards(int chunk) const { return f_[chunk]; }
  int backwards(int chunk) const { return b_[chunk]; }
  int weights(int chunk) const { return w_[chunk]; }

 private:
  void emit(Pass pass, int chunk, int& next) { out_.push_back({pass, next++, chunk}); }
  std::vector<Action>& out_;
  int f_[2] = {0, 0}, b_[2] = {0, 0}, w_[2] = {0, 0};
};

}  // namespace

Schedule make_zb_v_handcrafted(const Problem& problem) {
  require_vshape(problem, "zb-v-h");
  const int p = problem.devices;
  const int m = problem.microbatches;
  const int n = std::max(2 * p - 1, m);
  Schedule schedule = Schedule::empty("zb-v-h", p);
  for (int r = 0; r < p; ++r) {
    std::vector<Action> full;
    VDevice d(full);
    // Warm-up: chunk-0 forwards fill the way down and back up the V.
    for (int k = 0; k < 2 * (p - r) - 1; ++k) d.f(0);
    for (int k = 0; k < r; ++k) {
      d.f(1);
      d.f(0);
    }
    for (int k = 0; k < p - r; ++k) {
      d.f(1);
      d.b(1);
      d.w(1);
    }
    // Steady state: one microbatch of each chunk per round, each backward followed by its W.
    while (d.forwards(1) < d.forwards(0) || d.forwards(0) < n) {
      if (d.forwards(0) < n) d.f(0);
      d.b(0);
      d.w(0);
      d.f(1);
      d.b(1);
      d.w(1);
    }
    // Cool-down: the remaining backwards, W deferred into the tail.
    for (int k = 0; k < r; ++k) {
      d.b(0);
      d.b(1);
    }
    for (int k = 0; k < p - r; ++k) {
      d.b(0);
      d.w(0);
    }
    while (d.weights(1) < d.backwards(1)) d.w(1);
    while (d.weights(0) < d.backwards(0)) d.w(0);
    for (const Action& action : full) {
      if (action.microbatch < m) schedule.devices[r].push_back(action);
    }
  }
  return schedule;
}

}  // namespace zb
