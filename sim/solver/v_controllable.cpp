// Building-block V schedules (see v_controllable.h). The blocks are laid out on a grid of unit
// slots, one pass per device and slot; the squeeze moves passes to earlier free slots on that grid,
// and only the resulting per-device order leaves this file (the evaluator times it for real).
#include "sim/solver/v_controllable.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "sim/schedule/error.h"
#include "sim/schedule/evaluator.h"
#include "sim/schedule/memory.h"
#include "sim/schedule/validator.h"

namespace zb {

namespace {

constexpr int kW = 4;  // the W kind, after the four VPass kinds
constexpr int kKinds = 5;
constexpr int kEmpty = -1;

constexpr int chunk_of(int kind) { return kind == 1 || kind == 2 ? 1 : 0; }
constexpr bool is_b(int kind) { return kind == 2 || kind == 3; }

// Activation memory per pass on one device, by chunk (net deltas, as peak_memory_by_order counts).
struct DeviceMemory {
  std::array<double, 2> f{}, b{}, w{};
};

// One device's passes on the slot grid. cell[t] holds kind + kKinds * microbatch or kEmpty.
// W carry no identity of their own: the j-th W frees the j-th B in slot order (FIFO).
struct DeviceSlots {
  std::array<std::vector<int>, kKinds> slot;  // slot[kind][microbatch or W index]
  std::vector<int> cell;
};

class VGrid {
 public:
  VGrid(const Problem& problem, const VBlock& block) : p_(problem.devices), m_(problem.microbatches) {
    int last = 0;
    for (const auto& row : block) last = std::max(last, *std::max_element(row.begin(), row.end()));
    horizon_ = last + kVBlockPeriod * (m_ - 1) + 2 * m_ + 1;  // room for every W after the last pass
    devices_.resize(static_cast<std::size_t>(p_));
    memory_.resize(static_cast<std::size_t>(p_));
    for (int d = 0; d < p_; ++d) {
      DeviceSlots& device = devices_[d];
      device.cell.assign(static_cast<std::size_t>(horizon_), kEmpty);
      for (int kind = 0; kind < 4; ++kind) {
        for (int k = 0; k < m_; ++k) place(d, kind, k, block[d][kind] + kVBlockPeriod * k);
      }
      for (int c = 0; c < 2; ++c) {
        const int stage = problem.stage_of(d, c);
        memory_[d].f[c] = memory_delta(problem, Pass::F, stage).net();
        memory_[d].b[c] = memory_delta(problem, Pass::B, stage).net();
        memory_[d].w[c] = memory_delta(problem, Pass::W, stage).net();
      }
    }
  }

  // W into the free slots, each as early as a B is waiting for it.
  void put_w() {
    for (auto& device : devices_) {
      device.slot[kW].clear();
      int waiting = 0;
      for (int t = 0; t < horizon_; ++t) {
        const int code = device.cell[t];
        if (code == kEmpty) {
          if (waiting > 0) {
            device.cell[t] = kW + kKinds * static_cast<int>(device.slot[kW].size());
            device.slot[kW].push_back(t);
            --waiting;
          }
        } else if (is_b(code % kKinds)) {
          ++waiting;
        }
      }
    }
  }

  void drop_w() {
    for (auto& device : devices_) {
      for (int t : device.slot[kW]) device.cell[t] = kEmpty;
      device.slot[kW].clear();
    }
  }

  // The squeeze: in slot order, each pass moves to the earliest free slot after its dependencies
  // where no device's peak exceeds the largest peak before the squeeze. The steady phase (from the
  // first chunk-0 B on device 0 to the first last-microbatch chunk-0 F) stays as the block has it;
  // so does the warm-up when the W are not placed (they would fill its gaps). Without placed W the
  // memory counts W as put_w would put them. Ends with the passes pulled together (unit times).
  void squeeze(bool w_placed) {
    double limit = 0;
    for (int d = 0; d < p_; ++d) limit = std::max(limit, peak(d, !w_placed));
    enum class Phase { warm_up, steady, cool_down } phase = Phase::warm_up;
    for (const auto& [t, d] : slot_order()) {
      const int code = devices_[d].cell[t];
      const int kind = code % kKinds;
      const int k = code / kKinds;
      if (phase == Phase::warm_up && kind == 3 && d == 0) phase = Phase::steady;
      if (phase == Phase::steady) {
        if (kind == 0 && k == m_ - 1) phase = Phase::cool_down;
        continue;
      }
      if (phase == Phase::warm_up && !w_placed) continue;
      for (int s = earliest(d, kind, k); s < t; ++s) {
        if (devices_[d].cell[s] != kEmpty) continue;
        move(d, t, s);
        if (peak(d, !w_placed) <= limit * (1 + 1e-12)) break;
        move(d, s, t);
      }
    }
    if (!w_placed) put_w();
    compact();
  }

  // The per-device order; each W takes the oldest waiting B's chunk and microbatch.
  Schedule to_schedule(std::string name) const {
    Schedule schedule = Schedule::empty(std::move(name), p_);
    for (int d = 0; d < p_; ++d) {
      std::vector<Action>& actions = schedule.devices[d];
      actions.reserve(6 * static_cast<std::size_t>(m_));
      std::vector<Action> waiting;  // B in slot order; next_w indexes the oldest without its W
      std::size_t next_w = 0;
      for (int code : devices_[d].cell) {
        if (code == kEmpty) continue;
        const int kind = code % kKinds;
        const int k = code / kKinds;
        if (kind == kW) {
          actions.push_back({Pass::W, waiting[next_w].microbatch, waiting[next_w].chunk});
          ++next_w;
          continue;
        }
        const Action action{kind < 2 ? Pass::F : Pass::B, k, chunk_of(kind)};
        actions.push_back(action);
        if (action.pass == Pass::B) waiting.push_back(action);
      }
    }
    return schedule;
  }

  // The largest device peak, counting W where put_w would put them when none are placed.
  double largest_peak(bool implicit_w) const {
    double largest = 0;
    for (int d = 0; d < p_; ++d) largest = std::max(largest, peak(d, implicit_w));
    return largest;
  }

 private:
  void place(int d, int kind, int k, int t) {
    DeviceSlots& device = devices_[d];
    auto& slots = device.slot[kind];
    if (static_cast<int>(slots.size()) <= k) slots.resize(static_cast<std::size_t>(k) + 1);
    slots[k] = t;
    device.cell[t] = kind + kKinds * k;
  }

  void move(int d, int from, int to) {
    const int code = devices_[d].cell[from];
    devices_[d].cell[from] = kEmpty;
    place(d, code % kKinds, code / kKinds, to);
  }

  // Every pass as (slot, device), in the order the squeeze visits them.
  std::vector<std::pair<int, int>> slot_order() const {
    std::vector<std::pair<int, int>> order;
    for (int t = 0; t < horizon_; ++t) {
      for (int d = 0; d < p_; ++d) {
        if (devices_[d].cell[t] != kEmpty) order.emplace_back(t, d);
      }
    }
    return order;
  }

  // The slot of the pass (d, kind, k) depends on, or -1: the neighbour's pass of the microbatch
  // down or up the V, the previous pass of the same microbatch here, the previous microbatch's
  // pass of the same kind; a W its B (the j-th B in slot order).
  int dependency_slot(int d, int kind, int k) const {
    const DeviceSlots& device = devices_[d];
    int slot = k > 0 ? device.slot[kind][k - 1] : -1;
    if (kind == kW) return std::max(slot, nth_b_slot(device, k));
    if ((kind == 0 || kind == 2) && d > 0) slot = std::max(slot, devices_[d - 1].slot[kind][k]);
    if ((kind == 1 || kind == 3) && d + 1 < p_) slot = std::max(slot, devices_[d + 1].slot[kind][k]);
    if (kind > 0) slot = std::max(slot, device.slot[kind - 1][k]);
    return slot;
  }

  int earliest(int d, int kind, int k) const { return dependency_slot(d, kind, k) + 1; }

  // The j-th smallest slot among the device's B of both chunks (each list ascends).
  static int nth_b_slot(const DeviceSlots& device, int j) {
    const auto& x = device.slot[2];
    const auto& y = device.slot[3];
    const int n = j + 1;
    const int y_size = static_cast<int>(y.size());
    // The n smallest are x's first i and y's first n - i: the largest i whose x[i - 1] is not
    // above the first y left out.
    int lo = std::max(0, n - y_size);
    int hi = std::min(n, static_cast<int>(x.size()));
    while (lo < hi) {
      const int i = (lo + hi + 1) / 2;
      if (n - i < y_size && x[i - 1] > y[n - i]) {
        hi = i - 1;
      } else {
        lo = i;
      }
    }
    return std::max(lo > 0 ? x[lo - 1] : -1, n - lo > 0 ? y[n - lo - 1] : -1);
  }

  // The device's peak along its slots (order-based, as the validator counts it).
  double peak(int d, bool implicit_w) const {
    const DeviceMemory& memory = memory_[d];
    std::vector<int>& waiting = waiting_scratch_;  // chunks of the B still without their W
    waiting.clear();
    std::size_t oldest = 0;
    double current = 0;
    double highest = 0;
    for (int code : devices_[d].cell) {
      const int kind = code == kEmpty ? kEmpty : code % kKinds;
      if (kind == kW || (kind == kEmpty && implicit_w && oldest < waiting.size())) {
        current += memory.w[waiting[oldest++]];
      } else if (kind == 0 || kind == 1) {
        current += memory.f[chunk_of(kind)];
      } else if (is_b(kind)) {
        current += memory.b[chunk_of(kind)];
        waiting.push_back(chunk_of(kind));
      }
      highest = std::max(highest, current);
    }
    return highest;
  }

  // Re-times the grid with unit passes and no transfer time, keeping every device's order.
  void compact() {
    std::vector<std::array<std::vector<int>, kKinds>> start(static_cast<std::size_t>(p_));
    std::vector<int> device_free(static_cast<std::size_t>(p_), 0);
    for (int d = 0; d < p_; ++d) {
      for (int kind = 0; kind < kKinds; ++kind) start[d][kind].resize(devices_[d].slot[kind].size());
    }
    // Dependencies come earlier in slot order, so their new slots are known when needed.
    auto retimed = [&](int d, int kind, int k) {
      int ready = device_free[d];
      if (k > 0) ready = std::max(ready, start[d][kind][k - 1] + 1);
      if (kind != kW) {
        if ((kind == 0 || kind == 2) && d > 0) ready = std::max(ready, start[d - 1][kind][k] + 1);
        if ((kind == 1 || kind == 3) && d + 1 < p_) ready = std::max(ready, start[d + 1][kind][k] + 1);
        if (kind > 0) ready = std::max(ready, start[d][kind - 1][k] + 1);
      }
      return ready;
    };
    for (const auto& [t, d] : slot_order()) {
      const int code = devices_[d].cell[t];
      const int kind = code % kKinds;
      const int k = code / kKinds;
      const int s = retimed(d, kind, k);
      start[d][kind][k] = s;
      device_free[d] = s + 1;
    }
    for (int d = 0; d < p_; ++d) {
      DeviceSlots& device = devices_[d];
      std::fill(device.cell.begin(), device.cell.end(), kEmpty);
      for (int kind = 0; kind < kKinds; ++kind) {
        for (std::size_t k = 0; k < start[d][kind].size(); ++k) place(d, kind, static_cast<int>(k), start[d][kind][k]);
      }
    }
  }

  int p_ = 0;
  int m_ = 0;
  int horizon_ = 0;
  std::vector<DeviceSlots> devices_;
  std::vector<DeviceMemory> memory_;
  mutable std::vector<int> waiting_scratch_;
};

void require_v(const Problem& problem, const char* name) {
  if (problem.chunks != 2 || problem.placement != Placement::vshape) {
    throw InputError(fmt::format("{}: needs --chunks 2 --placement vshape, got chunks={} placement={}", name,
                                 problem.chunks, placement_name(problem.placement)));
  }
}

Schedule build(const Problem& problem, const VBlock& block, std::string name) {
  VGrid grid(problem, block);
  grid.put_w();
  grid.squeeze(true);
  grid.drop_w();
  grid.squeeze(false);
  grid.drop_w();
  grid.put_w();
  return grid.to_schedule(std::move(name));
}

}  // namespace

VBlock v_min_block(int p) {
  // Offsets between the passes chosen so that (p+4)/3 microbatches are in flight; p % 3 == 0
  // needs a gap of 2 before the backward to keep the 6 passes on distinct slots mod 6.
  const int gap = p % 3 == 0 ? 2 : 0;
  VBlock block(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) block[i] = {i, 2 * p - i - 1, 2 * p + gap + i, 4 * p + gap - i - 1};
  return block;
}

VBlock v_half_block(int p) {
  const int gap = p % 2 == 0 ? 3 : 0;
  VBlock block(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) block[i] = {2 * i, 3 * p - i - 2, 3 * p + gap + 2 * i - 1, 6 * p + gap - i - 2};
  return block;
}

Schedule schedule_from_block(const Problem& problem, const VBlock& block) { return build(problem, block, "v-block"); }

Schedule make_v_min(const Problem& problem) {
  require_v(problem, "v-min");
  return build(problem, v_min_block(problem.devices), "v-min");
}

Schedule make_v_half(const Problem& problem) {
  require_v(problem, "v-half");
  return build(problem, v_half_block(problem.devices), "v-half");
}

}  // namespace zb
