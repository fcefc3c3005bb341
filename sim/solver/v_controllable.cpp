// Building-block V schedules (see v_controllable.h). The blocks are laid out on a grid of unit
// slots, one pass per device and slot; the squeeze moves passes to earlier free slots on that grid,
// and only the resulting per-device order leaves this file (the evaluator times it for real).
#include "sim/solver/v_controllable.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>
#include <utility>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/memory.h"
#include "sim/core/validator.h"
#include "sim/solver/time_grid.h"

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
    profiles_.resize(static_cast<std::size_t>(p_));
    for (int d = 0; d < p_; ++d) {
      DeviceSlots& device = devices_[d];
      device.cell.assign(static_cast<std::size_t>(horizon_), kEmpty);
      for (int kind = 0; kind < 4; ++kind) {
        device.slot[kind].resize(static_cast<std::size_t>(m_));
        for (int k = 0; k < m_; ++k) place(d, kind, k, block[d][kind] + kVBlockPeriod * k);
      }
      for (int c = 0; c < 2; ++c) {
        const int stage = problem.stage_of(d, c);
        memory_[d].f[c] = memory_delta(problem, Pass::F, stage).net();
        memory_[d].b[c] = memory_delta(problem, Pass::B, stage).net();
        memory_[d].w[c] = memory_delta(problem, Pass::W, stage).net();
      }
      uniform_w_.push_back(memory_[d].w[0] == memory_[d].w[1]);
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
  // first chunk-0 B on device 0 to the first last-microbatch chunk-0 F) stays as the block has it
  // unless !keep_steady (after rebuild_ends, which reorders both ends); so does the warm-up when
  // the W are not placed (they would fill its gaps). Without placed W the memory counts W as put_w
  // would put them. Ends with the passes pulled together (unit times).
  void squeeze(bool w_placed, bool keep_steady = true) {
    const bool implicit_w = !w_placed;
    double limit = 0;
    for (int d = 0; d < p_; ++d) {
      rebuild_profile(d, implicit_w);
      limit = std::max(limit, uniform_w_[d] ? high(d, 0, horizon_) : peak(d, implicit_w));
    }
    const double bound = limit * (1 + 1e-12);
    enum class Phase { warm_up, steady, cool_down } phase = Phase::warm_up;
    for_each_in_slot_order([&](int t, int d, int kind, int k) {
      if (phase == Phase::warm_up && kind == 3 && d == 0 && keep_steady) phase = Phase::steady;
      if (phase == Phase::steady) {
        if (kind == 0 && k == m_ - 1) phase = Phase::cool_down;
        return;
      }
      if (phase == Phase::warm_up && !w_placed) return;
      for (int s = earliest(d, kind, k); s < t; ++s) {
        if (devices_[d].cell[s] != kEmpty) continue;
        move(d, t, s);
        if (trial_fits(d, s, t, implicit_w, bound)) {
          commit_trial(d);
          break;
        }
        move(d, s, t);
      }
    });
    if (!w_placed) put_w();
    compact();
  }

  // The cool-down rebuilt (after the squeeze, W placed): with P the largest number of chunk
  // activations any device holds, each device keeps its last ceil(P/2) chunk-0 B and its last
  // min(i+1, P - ceil(P/2)) chunk-1 B out of the squeeze's order and lays them on fixed diagonals
  // after device 0's last chunk-1 F (chunk-0 B two slots apart ending 2p - i after it, chunk-1 B
  // two slots apart ending i + 1 after it), which pairs the two chunks' backwards the way the
  // reference's process_cooldown does (see V-SCHEDULES.md). The W from the tail are taken out (as
  // many as the B taken and at least P, so the diagonals have room) and put back into the free
  // slots after the last W kept, each as soon as a B waits. Then the grid is re-timed. Returns false
  // and leaves the grid as it was when a diagonal slot is taken, an order would break a dependency,
  // or the largest device peak would rise.
  bool rebuild_cool_down() {
    const std::vector<DeviceSlots> saved = devices_;
    const double before = largest_peak(false);
    auto undo = [&] {
      devices_ = saved;
      return false;
    };
    const int held = most_activations_held();
    const int chunk0_b = std::min((held + 1) / 2, m_);
    const int chunk1_b_cap = std::min(held - chunk0_b, m_);
    const int start = devices_[0].slot[1][m_ - 1];
    for (int d = 0; d < p_; ++d) {
      DeviceSlots& device = devices_[d];
      const int chunk1_b = std::min(d + 1, chunk1_b_cap);
      for (int k = m_ - chunk0_b; k < m_; ++k) device.cell[device.slot[3][k]] = kEmpty;
      for (int k = m_ - chunk1_b; k < m_; ++k) device.cell[device.slot[2][k]] = kEmpty;
      const int dropped_w = std::min(static_cast<int>(device.slot[kW].size()), std::max(chunk0_b + chunk1_b, held));
      for (int j = 0; j < dropped_w; ++j) {
        device.cell[device.slot[kW].back()] = kEmpty;
        device.slot[kW].pop_back();
      }
      auto lay = [&](int kind, int k, int t) {
        if (t < 0 || t >= horizon_ || device.cell[t] != kEmpty) return false;
        place(d, kind, k, t);
        return true;
      };
      for (int j = 0; j < chunk0_b; ++j) {
        if (!lay(3, m_ - 1 - j, start - d + 2 * p_ - 2 * j)) return undo();
      }
      for (int j = 0; j < chunk1_b; ++j) {
        if (!lay(2, m_ - 1 - j, start + 1 + d - 2 * j)) return undo();
      }
      const int last_w = device.slot[kW].empty() ? -1 : device.slot[kW].back();
      int waiting = 0;
      for (int t = 0; t < horizon_; ++t) {
        const int code = device.cell[t];
        if (code == kEmpty) {
          if (t > last_w && waiting > 0) {
            place(d, kW, static_cast<int>(device.slot[kW].size()), t);
            --waiting;
          }
        } else if (is_b(code % kKinds)) {
          ++waiting;
        } else if (code % kKinds == kW) {
          --waiting;
        }
        if (waiting < 0) return undo();  // a W kept before its B
      }
      if (waiting > 0) return undo();  // no room left for every W
    }
    if (!dependencies_hold()) return undo();
    compact();
    if (largest_peak(false) > before * (1 + 1e-12)) return undo();
    return true;
  }

  // The warm-up rebuilt (W placed), the reference's process_warmup: with P the most chunk
  // activations any device holds (at most 2p), device i takes everything before its first chunk-0 B
  // out and lays it again from slot i: chunk-0 F back to back for 2(p-1-i) slots, then i+1 pairs
  // (chunk-0 F, chunk-1 F), then (chunk-1 B, W, chunk-1 F) and once those F run out (chunk-1 B, W,
  // chunk-0 F). Only min(i+1, P/2) chunk-1 F and P minus that chunk-0 F go before the first B, so
  // the device fills P before it starts its backwards. Then the grid is re-timed. Returns false and
  // leaves the grid as it was when a pass would land on a taken slot, a dependency would break, or
  // the largest device peak would rise.
  bool rebuild_warm_up() {
    const std::vector<DeviceSlots> saved = devices_;
    const double before = largest_peak(false);
    auto undo = [&] {
      devices_ = saved;
      return false;
    };
    const int held = std::min(most_activations_held(), 2 * p_);
    for (int d = 0; d < p_; ++d) {
      DeviceSlots& device = devices_[d];
      const int first_b0 = device.slot[3][0];
      std::array<int, kKinds> count{};  // passes of each kind before the first chunk-0 B
      for (int kind : {0, 1, 2, kW}) {
        for (int t : device.slot[kind]) {
          if (t >= first_b0) break;
          device.cell[t] = kEmpty;
          ++count[kind];
        }
      }
      if (device.slot[kW].size() > static_cast<std::size_t>(count[kW])) {
        device.slot[kW].erase(device.slot[kW].begin(), device.slot[kW].begin() + count[kW]);
      } else {
        device.slot[kW].clear();
      }
      std::vector<int> later_w = std::move(device.slot[kW]);  // W after the first chunk-0 B
      device.slot[kW].clear();
      const int f1_first = std::min({d + 1, held / 2, m_});
      const int f0_first = std::min(held - f1_first, m_);
      std::array<int, kKinds> laid{};
      int t = d;
      auto lay = [&](int kind, int most) {
        const bool wanted = laid[kind] < std::min(most, count[kind]);
        if (wanted) {
          if (t >= horizon_ || device.cell[t] != kEmpty) return false;
          place(d, kind, laid[kind]++, t);
        }
        ++t;
        return true;
      };
      bool fits = true;
      for (int i = 0; i < 2 * (p_ - 1 - d) && fits; ++i) fits = lay(0, f0_first);
      for (int i = 0; i <= d && fits; ++i) fits = lay(0, f0_first) && lay(1, f1_first);
      while (fits && (laid[0] < count[0] || laid[1] < count[1] || laid[2] < count[2] || laid[kW] < count[kW])) {
        fits = lay(2, m_) && lay(kW, m_) && (laid[1] < count[1] ? lay(1, m_) : lay(0, m_));
      }
      if (!fits) return undo();
      for (int w : later_w) place(d, kW, static_cast<int>(device.slot[kW].size()), w);
    }
    if (!dependencies_hold()) return undo();
    compact();
    if (largest_peak(false) > before * (1 + 1e-12)) return undo();
    return true;
  }

  // No grid is shorter: device d starts no earlier than slot d and runs 6 passes per microbatch.
  int shortest_length() const { return p_ - 1 + kVBlockPeriod * m_; }

  // The slots up to the last pass on any device (the span in unit passes once compacted).
  int length() const {
    int last = -1;
    for (const DeviceSlots& device : devices_) {
      for (int t = horizon_ - 1; t > last; --t) {
        if (device.cell[t] != kEmpty) {
          last = t;
          break;
        }
      }
    }
    return last + 1;
  }

  // The most chunk activations any device holds: F minus W along its slots (the paper's P).
  int most_activations_held() const {
    int held = 0;
    for (const DeviceSlots& device : devices_) {
      int level = 0;
      for (int code : device.cell) {
        const int kind = code == kEmpty ? kEmpty : code % kKinds;
        level += kind == 0 || kind == 1 ? 1 : kind == kW ? -1 : 0;
        held = std::max(held, level);
      }
    }
    return held;
  }

  // Whether every pass comes after what it depends on (each W after its B).
  bool dependencies_hold() const {
    for (int d = 0; d < p_; ++d) {
      for (int kind = 0; kind < kKinds; ++kind) {
        const auto& slots = devices_[d].slot[kind];
        for (int k = 0; k < static_cast<int>(slots.size()); ++k) {
          if (dependency_slot(d, kind, k) >= slots[k]) return false;
        }
      }
    }
    return true;
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

  // visit(slot, device, kind, microbatch) for every pass in slot order (slot, then device), the
  // cells read as it goes: a visit may move its pass, but only to a slot already passed.
  template <typename Visit>
  void for_each_in_slot_order(Visit&& visit) {
    for (int t = 0; t < horizon_; ++t) {
      for (int d = 0; d < p_; ++d) {
        const int code = devices_[d].cell[t];
        if (code != kEmpty) visit(t, d, code % kKinds, code / kKinds);
      }
    }
  }

  void move(int d, int from, int to) {
    const int code = devices_[d].cell[from];
    devices_[d].cell[from] = kEmpty;
    place(d, code % kKinds, code / kKinds, to);
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

  // One slot of the memory walk: `level` and `waiting` (B without their W) after cell `code`.
  // W free the same on both chunks here (see uniform_w_), so a W needs no identity.
  void walk(const DeviceMemory& memory, int code, bool implicit_w, double& level, int& waiting) const {
    const int kind = code == kEmpty ? kEmpty : code % kKinds;
    if (kind == kW || (kind == kEmpty && implicit_w && waiting > 0)) {
      level += memory.w[0];
      --waiting;
    } else if (kind == 0 || kind == 1) {
      level += memory.f[chunk_of(kind)];
    } else if (is_b(kind)) {
      level += memory.b[chunk_of(kind)];
      ++waiting;
    }
  }

  double delta_of(int d, int code) const {
    const int kind = code % kKinds;
    const DeviceMemory& memory = memory_[d];
    if (kind == kW) return memory.w[0];
    return kind < 2 ? memory.f[chunk_of(kind)] : memory.b[chunk_of(kind)];
  }

  // The device's memory after every slot, kept in runs of kRun slots: each run has an offset that
  // applies to all its slots (so a move shifts whole runs at once) and its highest level, so that a
  // move is judged and kept by touching only the slots it changes.
  static constexpr int kRun = 8;
  struct Profile {
    std::vector<double> level;  // without the run's offset
    std::vector<int> waiting;
    std::vector<double> run_offset;
    std::vector<double> run_high;  // with the offset
    double at(int t) const { return level[t] + run_offset[t / kRun]; }
  };

  void rebuild_profile(int d, bool implicit_w) {
    if (!uniform_w_[d]) return;
    Profile& profile = profiles_[d];
    profile.level.resize(static_cast<std::size_t>(horizon_));
    profile.waiting.resize(static_cast<std::size_t>(horizon_));
    double level = 0;
    int waiting = 0;
    for (int t = 0; t < horizon_; ++t) {
      walk(memory_[d], devices_[d].cell[t], implicit_w, level, waiting);
      profile.level[t] = level;
      profile.waiting[t] = waiting;
    }
    const auto runs = static_cast<std::size_t>((horizon_ + kRun - 1) / kRun);
    profile.run_offset.assign(runs, 0.0);
    profile.run_high.assign(runs, 0.0);
    for (int run = 0; run * kRun < horizon_; ++run) refresh_run(profile, run);
  }

  void refresh_run(Profile& profile, int run) const {
    const int end = std::min(horizon_, (run + 1) * kRun);
    double highest = profile.level[run * kRun];
    for (int t = run * kRun; t < end; ++t) highest = std::max(highest, profile.level[t]);
    profile.run_high[run] = highest + profile.run_offset[run];
  }

  // The highest level over slots [from, to), 0 when empty (memory starts at 0).
  double high(int d, int from, int to) const {
    const Profile& profile = profiles_[d];
    double highest = 0;
    int t = from;
    while (t < to && t % kRun != 0) highest = std::max(highest, profile.at(t++));
    while (t + kRun <= to) {
      highest = std::max(highest, profile.run_high[t / kRun]);
      t += kRun;
    }
    while (t < to) highest = std::max(highest, profile.at(t++));
    return highest;
  }

  // Whether the device stays within `bound` with its cells as they are now, the profile holding
  // them as they were before one pass moved from slot `vacated` earlier to `from`. Every level in
  // the profile is within the bound already (the squeeze starts at the largest peak and keeps only
  // moves that fit), so only the levels the move changes are looked at. With every W placed the
  // move shifts the levels in [from, vacated) by its own delta; with W implicit the walk restarts at
  // `from` and stops, once past `vacated`, where it meets the old walk again (same level, same W
  // owed), or as soon as it goes over the bound.
  bool trial_fits(int d, int from, int vacated, bool implicit_w, double bound) {
    if (!uniform_w_[d]) return peak(d, implicit_w) <= bound;
    const Profile& profile = profiles_[d];
    Trial& trial = trial_;
    trial.from = from;
    trial.shift.reset();
    if (!implicit_w) {
      const double delta = delta_of(d, devices_[d].cell[from]);
      trial.shift = delta;
      trial.to = vacated;
      return delta <= 0 || high(d, from, vacated) + delta <= bound;
    }
    trial.level.clear();
    trial.waiting.clear();
    double level = from > 0 ? profile.at(from - 1) : 0;
    int waiting = from > 0 ? profile.waiting[from - 1] : 0;
    int t = from;
    for (; t < horizon_; ++t) {
      walk(memory_[d], devices_[d].cell[t], implicit_w, level, waiting);
      if (t >= vacated && waiting == profile.waiting[t]) {
        const double old = profile.at(t);
        if (std::abs(level - old) <= 1e-12 * (1 + std::abs(level))) break;
      }
      if (level > bound) return false;
      trial.level.push_back(level);
      trial.waiting.push_back(waiting);
    }
    trial.to = t;
    return true;
  }

  // Keeps the last trial's walk in the profile.
  void commit_trial(int d) {
    if (!uniform_w_[d]) return;
    Profile& profile = profiles_[d];
    const int from = trial_.from;
    const int to = trial_.to;
    if (from >= to) return;
    const int first_run = from / kRun;
    const int last_run = (to - 1) / kRun;
    if (trial_.shift) {
      const double delta = *trial_.shift;
      auto shift_slots = [&](int a, int b) {
        for (int t = a; t < b; ++t) profile.level[t] += delta;
      };
      if (first_run == last_run) {
        shift_slots(from, to);
        refresh_run(profile, first_run);
        return;
      }
      shift_slots(from, (first_run + 1) * kRun);
      refresh_run(profile, first_run);
      for (int run = first_run + 1; run < last_run; ++run) {
        profile.run_offset[run] += delta;
        profile.run_high[run] += delta;
      }
      shift_slots(last_run * kRun, to);
      refresh_run(profile, last_run);
      return;
    }
    for (int t = from; t < to; ++t) {
      profile.level[t] = trial_.level[t - from] - profile.run_offset[t / kRun];
      profile.waiting[t] = trial_.waiting[t - from];
    }
    for (int run = first_run; run <= last_run; ++run) refresh_run(profile, run);
  }

  // The device's peak along its slots (order-based, as the validator counts it), walking them all.
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
    // The new slots, flat: device d's passes of `kind` from base[d * kKinds + kind] on.
    std::vector<int>& base = base_scratch_;
    std::vector<int>& start = start_scratch_;
    base.resize(static_cast<std::size_t>(p_ * kKinds));
    int total = 0;
    for (int d = 0; d < p_; ++d) {
      for (int kind = 0; kind < kKinds; ++kind) {
        base[d * kKinds + kind] = total;
        total += static_cast<int>(devices_[d].slot[kind].size());
      }
    }
    start.resize(static_cast<std::size_t>(total));
    std::vector<int> device_free(static_cast<std::size_t>(p_), 0);
    auto new_slot = [&](int d, int kind, int k) { return start[base[d * kKinds + kind] + k]; };
    // In slot order: dependencies come earlier, so their new slots are known when needed.
    auto retimed = [&](int d, int kind, int k) {
      int ready = device_free[d];
      if (k > 0) ready = std::max(ready, new_slot(d, kind, k - 1) + 1);
      if (kind != kW) {
        if ((kind == 0 || kind == 2) && d > 0) ready = std::max(ready, new_slot(d - 1, kind, k) + 1);
        if ((kind == 1 || kind == 3) && d + 1 < p_) ready = std::max(ready, new_slot(d + 1, kind, k) + 1);
        if (kind > 0) ready = std::max(ready, new_slot(d, kind - 1, k) + 1);
      }
      return ready;
    };
    for_each_in_slot_order([&](int, int d, int kind, int k) {
      const int s = retimed(d, kind, k);
      start[base[d * kKinds + kind] + k] = s;
      device_free[d] = s + 1;
    });
    for (int d = 0; d < p_; ++d) {
      DeviceSlots& device = devices_[d];
      std::fill(device.cell.begin(), device.cell.end(), kEmpty);
      for (int kind = 0; kind < kKinds; ++kind) {
        auto& slots = device.slot[kind];
        const int* from = start.data() + base[d * kKinds + kind];
        for (std::size_t k = 0; k < slots.size(); ++k) {
          slots[k] = from[k];
          device.cell[from[k]] = kind + kKinds * static_cast<int>(k);
        }
      }
    }
  }

  int p_ = 0;
  int m_ = 0;
  int horizon_ = 0;
  std::vector<DeviceSlots> devices_;
  std::vector<DeviceMemory> memory_;
  std::vector<char> uniform_w_;  // the device's two chunks free the same per W
  std::vector<Profile> profiles_;
  struct Trial {
    int from = 0, to = 0;
    std::optional<double> shift;  // the levels in [from, to) moved by this; else the walk's values
    std::vector<double> level;
    std::vector<int> waiting;
  } trial_;
  mutable std::vector<int> waiting_scratch_;
  std::vector<int> base_scratch_, start_scratch_;  // compact's
};

// The largest device peak of a block's grid before the squeeze, with the W put as put_w puts them
// (what VGrid's largest_peak(false) gives after put_w), without building the grid at full m.
// Each device's peak is walked on n <= m microbatches: with the device's four passes at s_c + 6k,
// from s_max (its latest first pass) on every 6 slots hold one pass of each kind and two free
// slots, so the number of B still owing a W at s_max + 6j never falls and is fixed from j = 2 on.
// Past that point the grid for m + 1 microbatches, read 6 slots later, is the grid for m (same
// passes, same W owed, and the level is the same because a microbatch frees what it takes); and
// both agree with the grid for infinitely many microbatches before s_min + 6m. So the peak is the
// same for every m >= ceil((s_max - s_min + 18) / 6), and that many are walked (one more for
// margin). Devices whose two chunks free differently per W (the W queue would have to match too)
// or whose microbatch does not free what it takes are walked at full m. Device peaks depend only on
// the pass offsets and the memory, so they are kept per (memory, offsets).
class BlockPeaks {
 public:
  explicit BlockPeaks(const Problem& problem) : m_(problem.microbatches) {
    std::vector<double> deltas;
    for (int d = 0; d < problem.devices; ++d) {
      DeviceMemory memory;
      for (int c = 0; c < 2; ++c) {
        const int stage = problem.stage_of(d, c);
        memory.f[c] = memory_delta(problem, Pass::F, stage).net();
        memory.b[c] = memory_delta(problem, Pass::B, stage).net();
        memory.w[c] = memory_delta(problem, Pass::W, stage).net();
      }
      for (double delta : {memory.f[0], memory.f[1], memory.b[0], memory.b[1], memory.w[0], memory.w[1]}) {
        deltas.push_back(delta);
      }
      int id = 0;
      while (id < static_cast<int>(memories_.size()) && !same(memories_[id], memory)) ++id;
      if (id == static_cast<int>(memories_.size())) memories_.push_back(memory);
      memory_of_.push_back(id);
    }
    exact_sums_ = sums_exactly(deltas);
    for (const DeviceMemory& memory : memories_) {
      // Periodic: both chunks free the same per W, and a microbatch frees what it takes.
      const double take = memory.f[0] + memory.f[1];
      const double leftover = take + memory.b[0] + memory.b[1] + memory.w[0] + memory.w[1];
      periodic_.push_back(memory.w[0] == memory.w[1] && std::abs(leftover) <= 1e-12 * (1 + std::abs(take)));
      jumpable_.push_back(exact_sums_ && periodic_.back() && memory.f[0] >= 0 && memory.f[1] >= 0);
    }
  }

  // The largest device peak, or nullopt as soon as a device's goes over `cap` (when given).
  std::optional<double> largest_peak(const VBlock& block, std::optional<double> cap = std::nullopt) {
    double largest = 0;
    for (std::size_t d = 0; d < block.size(); ++d) {
      largest = std::max(largest, device_peak(memory_of_[d], block[d]));
      if (cap && !fits_limit(largest, *cap)) return std::nullopt;  // first_over_limit's rule, no vector
    }
    return largest;
  }

 private:
  static bool same(const DeviceMemory& a, const DeviceMemory& b) { return a.f == b.f && a.b == b.b && a.w == b.w; }

  struct KeyHash {
    std::size_t operator()(const std::array<int, 5>& key) const {
      std::size_t h = 0;
      for (int x : key) h = h * 1000003u + static_cast<std::size_t>(x);
      return h;
    }
  };

  // The microbatches from which a row of this spread has its periodic peak (see device_peak).
  static int settled_m(int spread) { return (spread + 18 + 5) / kVBlockPeriod + 1; }
  // Whole periods between a row's first chunk-1 B and its first chunk-0 B.
  static int periods_before_b0(const std::array<int, 4>& offset) { return (offset[3] - offset[2]) / kVBlockPeriod; }

  // The row's key into from_first_b_ (its memory and the positions of its chunk-1 F, chunk-1 B
  // and chunk-0 B; chunk-0 F at 0) when its walk from the first B repeats period by period as
  // device_peak explains (the memory jumpable, the passes in V order, the row settled at m, the
  // sums exact over its walk, at least one such period); else nullopt. `offset`: from the first pass.
  std::optional<std::size_t> repeating_shape(int id, const std::array<int, 4>& offset) const {
    const bool in_v_order = offset[0] < offset[1] && offset[1] < offset[2] && offset[2] < offset[3];
    if (!jumpable_[static_cast<std::size_t>(id)] || !in_v_order || m_ < settled_m(offset[3]) ||
        offset[3] + 4 * kVBlockPeriod > kExactTerms || periods_before_b0(offset) < 1) {
      return std::nullopt;
    }
    return static_cast<std::size_t>(id) * 216 +
           static_cast<std::size_t>(36 * (offset[1] % 6) + 6 * (offset[2] % 6) + offset[3] % 6);
  }

  // device_peak when what the row adds from its first B on is known already (the searched blocks'
  // usual case): the forwards before it and the formula, no walk, or nullopt.
  std::optional<double> known_peak(int id, const std::array<int, 4>& row) const {
    const std::array<int, 4> offset = {0, row[1] - row[0], row[2] - row[0], row[3] - row[0]};
    const std::optional<std::size_t> shape = repeating_shape(id, offset);
    if (!shape || *shape >= from_first_b_.size() || !from_first_b_[*shape]) return std::nullopt;
    const FromFirstB& rest = *from_first_b_[*shape];
    const DeviceMemory& memory = memories_[static_cast<std::size_t>(id)];
    const std::array<int, 2> count = forwards_before_b(offset, settled_m(offset[3]));
    const double before = count[0] * memory.f[0] + count[1] * memory.f[1];  // forwards_level's exact sum
    return before + std::max(rest.first_high, (periods_before_b0(offset) - 1) * rest.per_period + rest.last_high);
  }

  double device_peak(int id, const std::array<int, 4>& row) {
    if (const std::optional<double> known = known_peak(id, row)) return *known;
    const int first = *std::min_element(row.begin(), row.end());
    const int spread = *std::max_element(row.begin(), row.end()) - first;
    const std::array<int, 4> offset = {row[0] - first, row[1] - first, row[2] - first, row[3] - first};
    const DeviceMemory& memory = memories_[id];
    const bool periodic = periodic_[static_cast<std::size_t>(id)];
    // With m >= `settled` the grid agrees with the one for infinitely many microbatches over its
    // first spread + 24 slots, whose levels repeat every 6 slots from spread + 12 on (above): those
    // slots hold the peak, and the rest (the steady phase again, then the drain) is not walked.
    const int settled = settled_m(spread);
    const bool window = periodic && m_ >= settled;
    const int n = window ? settled : m_;
    const int length = window ? spread + 4 * kVBlockPeriod : spread + kVBlockPeriod * (n - 1) + 2 * n + 1;
    const bool forwards_first = memory.f[0] >= 0 && memory.f[1] >= 0;
    // Between the first chunk-1 B and the first chunk-0 B every period runs the same passes (the
    // forwards and that B) and one W right after the B, so each adds the same to the level and
    // peaks at the same point of it: the highest of those periods is in the first or the last. Past
    // the first period the walk jumps to the start of the last one, adding the periods skipped at
    // once, which is exact when the deltas sum exactly (sums_exactly); else every slot is walked.
    // What the walk adds from the first chunk-1 B on then depends only on the passes' positions
    // in the period, so it is kept per (memory, positions) and later rows are not walked at all.
    // (With one or two such periods the first and the last are the whole of them: the same sums.)
    const int periods = periods_before_b0(offset);
    const std::optional<std::size_t> shape = repeating_shape(id, offset);
    const bool jumps = shape && periods >= 3;
    const std::array<int, 5> key = {id, offset[0], offset[1], offset[2], offset[3]};
    if (const auto found = memo_.find(key); found != memo_.end()) return found->second;
    // The searched blocks put a row's four passes at distinct positions of the period, so the pass
    // in slot t is the one at t's position, if its microbatch is in range: no grid to fill.
    struct AtPosition {
      int kind = kEmpty;
      int from = 0;        // the kind runs in slots from + 6k for k < n
      unsigned reach = 0;  // 6n (0 at an empty position): slot t runs it when t - from < reach, unsigned
      double delta = 0;
    };
    std::array<AtPosition, kVBlockPeriod> at_position{};
    for (int kind = 0; kind < 4; ++kind) {
      AtPosition& at = at_position[static_cast<std::size_t>(offset[kind] % kVBlockPeriod)];
      if (at.kind != kEmpty) throw Error("v-auto: internal error: two passes of a block row share a position");
      at = {kind, offset[kind], static_cast<unsigned>(kVBlockPeriod * n),
            kind < 2 ? memory.f[chunk_of(kind)] : memory.b[chunk_of(kind)]};
    }
    // With both chunks freeing the same per W, the W owed need no identity: a count will do.
    const bool uniform_w = memory.w[0] == memory.w[1];
    owed_.clear();  // chunks of the B still without their W, oldest first from `oldest` (!uniform_w)
    std::size_t oldest = 0;
    int owed = 0;
    double level = 0;
    int start = 0;  // where the walk slot by slot begins
    if (forwards_first) {
      // Before the first B only forwards run and no W is owed, so the level only rises.
      level = forwards_level(memory, offset, n);
      start = std::min(offset[2], offset[3]);
    }
    double highest = level;
    const double before = level;
    const int jump_at = jumps ? start + kVBlockPeriod : -1;  // where the first period ends
    FromFirstB rest;
    bool jumped = false;
    double after_jump = 0;  // the level where the walk lands
    double high_after = 0;  // the highest from there on
    for (int t = start, position = start % kVBlockPeriod; t < length;
         ++t, position = position + 1 == kVBlockPeriod ? 0 : position + 1) {
      if (t == jump_at && owed == 0) {
        const int skipped = periods - 2;  // periods 1 .. periods - 2; period periods - 1 is walked
        rest.per_period = level - before;
        rest.first_high = highest - before;
        level += skipped * rest.per_period;
        t += skipped * kVBlockPeriod;
        jumped = true;
        after_jump = level;
        high_after = level;
      }
      const AtPosition& at = at_position[static_cast<std::size_t>(position)];
      if (static_cast<unsigned>(t - at.from) < at.reach) {
        level += at.delta;
        if (is_b(at.kind)) {
          ++owed;
          if (!uniform_w) owed_.push_back(chunk_of(at.kind));
        }
      } else if (owed > 0) {
        level += uniform_w ? memory.w[0] : memory.w[owed_[oldest++]];
        --owed;
      } else {
        continue;
      }
      highest = std::max(highest, level);
      high_after = std::max(high_after, level);
    }
    if (jumped) {
      rest.last_high = high_after - after_jump;
      if (from_first_b_.size() <= *shape) from_first_b_.resize(static_cast<std::size_t>(memories_.size()) * 216);
      from_first_b_[*shape] = rest;
    }
    memo_.emplace(key, highest);
    return highest;
  }

  // How many forwards of each chunk run before the row's first B (of microbatches below n).
  static std::array<int, 2> forwards_before_b(const std::array<int, 4>& offset, int n) {
    const int first_b = std::min(offset[2], offset[3]);
    std::array<int, 2> count{};
    for (int c = 0; c < 2; ++c) {
      if (offset[c] < first_b) count[c] = std::min(n, (first_b - offset[c] + kVBlockPeriod - 1) / kVBlockPeriod);
    }
    return count;
  }

  // The level before the row's first B: its forwards there (of microbatches below n), chunk 0's
  // then chunk 1's when the deltas sum exactly, else in slot order (the same sums, in the walk's
  // order).
  double forwards_level(const DeviceMemory& memory, const std::array<int, 4>& offset, int n) const {
    const std::array<int, 2> count = forwards_before_b(offset, n);
    if (exact_sums_) return count[0] * memory.f[0] + count[1] * memory.f[1];
    const int first_b = std::min(offset[2], offset[3]);
    double level = 0;
    if (memory.f[0] == memory.f[1]) {
      for (int i = 0; i < count[0] + count[1]; ++i) level += memory.f[0];
      return level;
    }
    std::array<int, 2> next = {offset[0], offset[1]};
    const std::array<int, 2> end = {next[0] + kVBlockPeriod * n, next[1] + kVBlockPeriod * n};
    for (;;) {
      const int c = next[0] < end[0] && (next[1] >= end[1] || next[0] < next[1]) ? 0 : 1;
      if (next[c] >= end[c] || next[c] >= first_b) break;
      level += memory.f[c];
      next[c] += kVBlockPeriod;
    }
    return level;
  }

  // Whether sums of up to kExactTerms of these deltas are exact in a double in any order and
  // grouping: all are multiples of one 2^-e (e up to 40: bytes, chunk activations and their halves
  // and quarters) of at most 2^40 such units, so every sum is an integer count of units under 2^52.
  static constexpr int kExactTerms = 1 << 12;
  static bool sums_exactly(const std::vector<double>& deltas) {
    for (int e = 0; e <= 40; e += 4) {
      const double unit = std::ldexp(1.0, -e);
      bool whole = true;
      for (double delta : deltas) {
        const double units = delta / unit;
        whole = whole && units == std::trunc(units) && std::abs(units) <= 0x1p40;
      }
      if (whole) return true;
    }
    return false;
  }
  int m_ = 0;
  bool exact_sums_ = false;  // sums_exactly(every device's deltas)
  std::vector<char> periodic_;  // by memory: the rows' levels repeat each period once settled
  // By memory: its rows' walks jump (periodic, forwards first, exact sums), so known_peak applies.
  std::vector<char> jumpable_;
  std::vector<DeviceMemory> memories_;
  std::vector<int> memory_of_;  // device -> index into memories_
  std::unordered_map<std::array<int, 5>, double, KeyHash> memo_;
  // What a walk that jumps adds from the row's first B on (device_peak), by memory and the
  // positions of the row's chunk-1 F, chunk-1 B and chunk-0 B (chunk-0 F is at 0).
  struct FromFirstB {
    double per_period = 0;  // one period before the first chunk-0 B
    double first_high = 0;  // the highest over the first period, above the level before it
    double last_high = 0;   // the highest from the last such period on, above the level it starts at
  };
  std::vector<std::optional<FromFirstB>> from_first_b_;
  std::vector<int> owed_;
};

// The steps after the block's grid has its W: squeeze with them, squeeze without, W back in.
// v-auto's extra step (the reference's reordering): the warm-up and the cool-down rebuilt on a copy
// of the squeezed grid, squeezed again over the whole grid, kept where that is shorter on the unit
// grid (elsewhere the squeeze's own order is as short and stays). At unit costs this closes the
// 1-2 slots the squeeze alone left above the closed form at odd limits.
void rebuild_ends(VGrid& grid) {
  if (grid.length() <= grid.shortest_length()) return;
  VGrid rebuilt = grid;
  const bool warm_up = rebuilt.rebuild_warm_up();
  const bool cool_down = rebuilt.rebuild_cool_down();
  if (!warm_up && !cool_down) return;
  rebuilt.squeeze(true, false);
  if (rebuilt.length() < grid.length()) grid = std::move(rebuilt);
}

// The action with its microbatch `by` later.
Action later(Action action, int by) {
  action.microbatch += by;
  return action;
}

// A device's actions with the six before `split` put in again there `more` times, each copy one
// microbatch later than the one before, and the actions from `split` on `more` microbatches later.
std::vector<Action> with_period_repeated(const std::vector<Action>& actions, std::size_t split, int more) {
  const std::size_t period = kVBlockPeriod;
  std::vector<Action> out(actions.begin(), actions.begin() + static_cast<std::ptrdiff_t>(split));
  out.reserve(actions.size() + period * static_cast<std::size_t>(more));
  for (int q = 1; q <= more; ++q) {
    for (std::size_t i = split - period; i < split; ++i) out.push_back(later(actions[i], q));
  }
  for (std::size_t i = split; i < actions.size(); ++i) out.push_back(later(actions[i], more));
  return out;
}

Schedule squeeze_into_schedule(VGrid grid, std::string name, bool rebuild) {
  grid.squeeze(true);
  grid.drop_w();
  grid.squeeze(false);
  grid.drop_w();
  grid.put_w();
  if (rebuild) rebuild_ends(grid);
  return grid.to_schedule(std::move(name));
}

// v-min and v-half are the spec's steps; v-auto (`rebuild`) adds rebuild_ends.
Schedule build(const Problem& problem, const VBlock& block, std::string name, bool rebuild = false) {
  VGrid grid(problem, block);
  grid.put_w();
  return squeeze_into_schedule(std::move(grid), std::move(name), rebuild);
}

// The first slot after `after` that falls on position `position` of the period.
int next_slot_at(int after, int position) {
  const int first = after + 1;
  return first + ((position - first) % kVBlockPeriod + kVBlockPeriod) % kVBlockPeriod;
}

// The blocks v-auto searches (the paper's appendix A): device 0's chunk-0 F at position 0 and its
// other three passes anywhere else in the period; each next device shifts chunk-0 F and chunk-1 B
// by delta (1..5) and chunk-1 F and chunk-0 B by -1, with one delta for the first `split` devices
// and a smaller or equal one after; the four passes of every device at distinct positions. Each
// pass's microbatch 0 runs at the first slot of its position after the pass it waits for.
// `visit(rows)` sees each distinct block once, in enumeration order, in a buffer reused for the
// next one.
// With E_d the sum of delta + 1 over devices 1..d, device d's positions are those of device 0
// moved by E_d - d, -d, E_d - d and -d, so two of them meet exactly when E_d is one of four
// residues mod 6 (chunk-0 F on chunk-1 F or chunk-0 B, chunk-1 B on chunk-1 F or chunk-0 B; the
// other two pairs never meet): a split is checked in constant time from where the first delta
// first meets one and how far the later delta goes from E_split. The slots follow without a
// search too: a pass `delta` positions ahead of the one it waits for runs `delta` slots after it,
// one position back (the way back up the V) one slot before it on the device above, and only the
// three turns need next_slot_at. Two parameter sets give one block only when the split is p - 1
// (every device gets the first delta, as with one delta throughout): that block is seen at its
// first parameters, the later delta 1, and the others are skipped.
template <typename Visit>
void for_each_searched_block(int p, Visit&& visit) {
  auto mod6 = [](int x) { return (x % kVBlockPeriod + kVBlockPeriod) % kVBlockPeriod; };
  VBlock rows(static_cast<std::size_t>(p));
  std::vector<int> delta_of(static_cast<std::size_t>(p), 0);
  for (int f1 = 1; f1 < kVBlockPeriod; ++f1) {
    for (int b1 = 1; b1 < kVBlockPeriod; ++b1) {
      for (int b0 = 1; b0 < kVBlockPeriod; ++b0) {
        if (f1 == b1 || f1 == b0 || b1 == b0) continue;
        unsigned meets = 0;  // the residues of E_d mod 6 at which two passes share a position
        for (int residue : {f1, b0, f1 - b1, b0 - b1}) meets |= 1u << mod6(residue);
        // How many devices in a row, stepping E by `step` from residue r, stay clear (6 or more:
        // all of them, as the residues repeat within 6 steps).
        auto clear_run = [&](int r, int step) {
          int run = 0;
          while (run < kVBlockPeriod && ((meets >> mod6(r + (run + 1) * step)) & 1u) == 0) ++run;
          return run == kVBlockPeriod ? p : run;
        };
        for (int first_delta = 1; first_delta < kVBlockPeriod; ++first_delta) {
          const int first_clear = clear_run(0, first_delta + 1);  // devices 1..first_clear are clear
          for (int later_delta = 1; later_delta <= first_delta; ++later_delta) {
            if (p == 1 && first_delta > 1) continue;  // one device: the deltas shape nothing
            const bool one_delta = later_delta == first_delta;
            if (one_delta && first_delta > 1 && p > 1) continue;  // seen at split p - 1, later delta 1
            const int splits = one_delta ? 1 : later_delta == 1 ? p - 1 : p - 2;
            for (int split = 1; split <= splits; ++split) {
              if (one_delta ? first_clear < p - 1
                            : first_clear < split ||
                                  clear_run(mod6(split * (first_delta + 1)), later_delta + 1) < p - 1 - split) {
                continue;
              }
              for (int d = 1; d < p; ++d) delta_of[d] = d <= split ? first_delta : later_delta;
              rows[0][0] = 0;
              for (int d = 1; d < p; ++d) rows[d][0] = rows[d - 1][0] + delta_of[d];
              rows[p - 1][1] = next_slot_at(rows[p - 1][0], mod6(f1 - (p - 1)));
              for (int d = p - 2; d >= 0; --d) rows[d][1] = rows[d + 1][1] + 1;
              rows[0][2] = next_slot_at(rows[0][1], b1);
              for (int d = 1; d < p; ++d) rows[d][2] = rows[d - 1][2] + delta_of[d];
              rows[p - 1][3] = next_slot_at(rows[p - 1][2], mod6(b0 - (p - 1)));
              for (int d = p - 2; d >= 0; --d) rows[d][3] = rows[d + 1][3] + 1;
              visit(std::as_const(rows));
            }
          }
        }
      }
    }
  }
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

Schedule schedule_from_block(const Problem& problem, const VBlock& block) {
  return build(problem, block, "v-block", true);
}

std::optional<Schedule> extend_steady_phase(const Schedule& at_n, const Schedule& at_n1, int more) {
  Schedule out = at_n1;
  for (std::size_t d = 0; d < at_n.devices.size(); ++d) {
    const std::vector<Action>& shorter = at_n.devices[d];
    const std::vector<Action>& longer = at_n1.devices[d];
    const std::size_t period = kVBlockPeriod;
    if (longer.size() != shorter.size() + period) return std::nullopt;
    std::size_t split = 0;  // where the period went in: the first action that differs
    while (split < shorter.size() && shorter[split] == longer[split]) ++split;
    if (split < period) return std::nullopt;
    for (std::size_t i = split; i < shorter.size(); ++i) {
      if (longer[i + period] != later(shorter[i], 1)) return std::nullopt;
    }
    for (std::size_t i = split; i < split + period; ++i) {
      if (longer[i] != later(longer[i - period], 1)) return std::nullopt;
    }
    out.devices[d] = with_period_repeated(shorter, split, more);  // the period checked is the one put in
  }
  return out;
}

Schedule make_v_min(const Problem& problem) {
  require_vshape(problem, "v-min");
  return build(problem, v_min_block(problem.devices), "v-min");
}

Schedule make_v_half(const Problem& problem) {
  require_vshape(problem, "v-half");
  return build(problem, v_half_block(problem.devices), "v-half");
}

namespace {

// A level of v_auto_levels with the peak its blocks share.
struct PeakLevel {
  double peak = 0;
  std::vector<VBlock> blocks;
};

std::vector<PeakLevel> peak_levels(const Problem& problem) {
  require_vshape(problem, "v-auto");
  const double limit = problem.memory_limit().value_or(problem.devices * problem.activation_unit());
  // Blocks by the peak of their unsqueezed grid. The squeeze never raises the largest peak, so that
  // peak decides what fits.
  std::map<double, std::vector<VBlock>> by_peak;  // in enumeration order within a peak
  BlockPeaks peaks(problem);
  // Blocks over `cap` are never searched (below), so their rows are not all walked; when no block
  // is within the cap, or the smallest peak is above it within the limit's tolerance (then the
  // searched limit is that peak, not the cap), every block's peak is needed after all.
  const double cap = std::min(limit, problem.devices * problem.activation_unit());
  for_each_searched_block(problem.devices, [&](const VBlock& block) {
    if (const std::optional<double> peak = peaks.largest_peak(block, cap)) by_peak[*peak].push_back(block);
  });
  if (by_peak.empty() || by_peak.begin()->first > cap) {
    by_peak.clear();
    for_each_searched_block(problem.devices,
                            [&](const VBlock& block) { by_peak[*peaks.largest_peak(block)].push_back(block); });
  }
  auto fits = [&](double peak) { return !first_over_limit({peak}, limit); };
  if (!fits(by_peak.begin()->first)) {
    const std::string given = problem.mem_limit && problem.mem_limit->times_p
                                  ? fmt::format("{} = {:g}", problem.mem_limit->to_string(), limit)
                                  : fmt::format("{:g}", limit);
    throw InputError(fmt::format("v-auto: memory limit {} is below {:g}, the smallest peak of a V building block "
                                 "for this problem",
                                 given, by_peak.begin()->first));
  }
  // Blocks above ZB-V's memory (p M_B, 2p chunk activations) are not searched, as the reference's
  // v-auto does not: at unit costs ZB-V's memory already reaches zero bubble, and the larger blocks
  // ranked lower, so a limit above it gave a longer schedule than ZB-V's memory (p=4 m=9: +5.7% at
  // 12 chunk activations against 11). So every limit from p M_B up gives the same schedule. When
  // even the smallest peak is above p M_B (a B that allocates, as the cost model's and the
  // executor's do) the blocks of that smallest peak are searched: they fit the limit (checked above).
  const double searched_limit =
      std::max(std::min(limit, problem.devices * problem.activation_unit()), by_peak.begin()->first);
  std::vector<PeakLevel> levels;
  for (auto level = by_peak.rbegin(); level != by_peak.rend(); ++level) {
    if (first_over_limit({level->first}, searched_limit)) continue;
    levels.push_back({level->first, std::move(level->second)});
  }
  return levels;
}

// The problem at the microbatches v-auto ranks blocks at (see make_v_auto).
Problem at_ranking_m(const Problem& problem) {
  Problem ranking = problem;
  ranking.microbatches = std::min(problem.microbatches, 2 * problem.devices + 1);
  return ranking;
}

// The block's schedule at the problem's m from its build at the ranking's m (`at_ranking`): that
// build extended when the steady phase repeats (extend_steady_phase), else the block built at m.
// The build at n with the period that ends its longest run of repeating actions (each the one six
// before it, one microbatch later) put in `more` more times on every device, or nullopt when a
// device has no repeating action. Unchecked: where the build at n + 1 puts its period elsewhere this is another
// schedule than the build at n + `more` (build_at_m takes it only when nothing can be shorter).
std::optional<Schedule> repeat_longest_run(const Schedule& at_n, int more) {
  Schedule out = at_n;
  const std::size_t period = kVBlockPeriod;
  for (std::size_t d = 0; d < at_n.devices.size(); ++d) {
    const std::vector<Action>& x = at_n.devices[d];
    std::size_t best_from = 0, best_to = 0, from = 0;
    bool in_run = false;
    for (std::size_t j = period; j <= x.size(); ++j) {
      const bool repeats = j < x.size() && x[j] == later(x[j - period], 1);
      if (repeats && !in_run) from = j;
      if (!repeats && in_run && j - from >= best_to - best_from) {
        best_from = from;
        best_to = j;
      }
      in_run = repeats;
    }
    if (best_to == 0) return std::nullopt;
    out.devices[d] = with_period_repeated(x, best_to, more);
  }
  return out;
}

// The largest device peak of the schedule, as the validator counts it.
double largest_peak(const Problem& problem, const Schedule& schedule) {
  const std::vector<double> peaks = peak_memory_by_order(problem, schedule);
  return peaks.empty() ? 0.0 : *std::max_element(peaks.begin(), peaks.end());
}

Schedule build_at_m(const Problem& problem, const VBlock& block, const Schedule& at_ranking) {
  const Problem ranking = at_ranking_m(problem);
  const int n = ranking.microbatches;
  if (problem.microbatches == n) return at_ranking;
  if (problem.microbatches > n + 1) {
    // First without the check build: the ranking build's longest repeating run put in, taken when
    // its span is the busiest device's work (no schedule is shorter, so the check could only find
    // another schedule as short) and it holds no more memory than the ranking build.
    if (std::optional<Schedule> repeated = repeat_longest_run(at_ranking, problem.microbatches - n)) {
      const TimeGrid grid(problem);
      double busiest = 0;
      for (int d = 0; d < problem.devices; ++d) busiest = std::max(busiest, problem.device_work(d));
      const EvalOptions span_only{.record_spans = false, .record_transfers = false, .record_memory = false};
      if (grid.ticks(evaluate(problem, *repeated, span_only).metrics.span) <= grid.ticks(busiest) &&
          largest_peak(problem, *repeated) <= largest_peak(ranking, at_ranking) * (1 + 1e-12)) {
        return std::move(*repeated);
      }
    }
    Problem one_more = problem;
    one_more.microbatches = n + 1;
    std::optional<Schedule> extended =
        extend_steady_phase(at_ranking, build(one_more, block, at_ranking.name, true), problem.microbatches - n);
    if (extended) return std::move(*extended);
  }
  return build(problem, block, at_ranking.name, true);
}

// No schedule in which device 0 never holds more than `peak` has a span (on the grid) below this:
// device 0's first backward (chunk 1's: the V's last stage is on device 0) waits for its
// microbatch's forward through all 2p stages from device 0's first pass on, and until then device 0
// can run only forwards, no more than fit in `peak` (nothing is freed before a B), so it idles for
// the rest of that chain on top of its work. Transfers are left out (a weaker bound, but a sure
// one), and one tick per summed cost is taken off for the rounding of sums on the grid. Every block
// of a level builds schedules within the level's peak (the squeeze and the rebuilt ends never raise
// the largest peak), so this bounds them all.
Ticks head_bound(const Problem& problem, const TimeGrid& grid, double peak) {
  const Ticks work = grid.ticks(problem.device_work(0));
  const Ticks rounding = 6 * static_cast<Ticks>(problem.microbatches) + problem.stages();
  const double smallest_f = std::min(memory_delta(problem, Pass::F, problem.stage_of(0, 0)).net(),
                                     memory_delta(problem, Pass::F, problem.stage_of(0, 1)).net());
  if (smallest_f <= 0) return work - rounding;
  const double fit = std::floor(peak / smallest_f + 1e-9);
  const Ticks forwards = static_cast<Ticks>(std::min(fit, 2.0 * problem.microbatches));
  Ticks chain = 0;
  for (int stage = 0; stage < problem.stages(); ++stage) chain += grid.ticks(problem.t_f[stage]);
  const Ticks longest_f =
      std::max(grid.ticks(problem.t_f[problem.stage_of(0, 0)]), grid.ticks(problem.t_f[problem.stage_of(0, 1)]));
  return work + std::max<Ticks>(0, chain - forwards * longest_f) - rounding;
}

}  // namespace

Schedule v_auto_block_schedule(const Problem& problem, const VBlock& block) {
  return build_at_m(problem, block, build(at_ranking_m(problem), block, "v-block", true));
}

std::vector<std::vector<VBlock>> v_auto_levels(const Problem& problem) {
  std::vector<std::vector<VBlock>> levels;
  for (PeakLevel& level : peak_levels(problem)) levels.push_back(std::move(level.blocks));
  return levels;
}

std::vector<VBlock> v_auto_candidates(const Problem& problem) {
  const std::vector<std::vector<VBlock>> levels = v_auto_levels(problem);
  // More memory buys a smaller bubble, so the two largest peaks that fit are ranked.
  std::vector<VBlock> candidates;
  for (std::size_t i = std::min<std::size_t>(2, levels.size()); i-- > 0;) {
    candidates.insert(candidates.end(), levels[i].begin(), levels[i].end());
  }
  return candidates;
}

Schedule make_v_auto(const Problem& problem) {
  const std::vector<PeakLevel> levels = peak_levels(problem);
  // The bubble lies in the warm-up and cool-down, which 2p + 1 microbatches already show: rank
  // there. Not at 2p: there the warm-up and the rebuilt cool-down meet and some blocks score a slot
  // better than at any larger m (p=5, limit 10 chunk activations: the first block reaching zero
  // bubble at 2p is 1 slot above at every m from 2p + 1 to 6p; ranked at 2p + 1, the winner matches
  // the best block at 2p + 2, 3p and 4p for every p = 4..8 and limit). Equal spans go to the
  // smaller peak. This is a heuristic, not exact: at p=8 m=64 (unit costs,
  // no limit) the span at m minus the span at 2p is 288 for most candidates but 287 or 286 for a
  // few (their squeeze does better with a longer steady phase), so the order at 2p can differ from
  // the order at m; there the winner still reaches zero bubble at m.
  // Spans are compared on the solvers' time grid (time_grid.h), so the time unit decides nothing.
  // No span is below the busiest device's work, nor below the level's head_bound: once the best
  // reaches that floor, no later candidate can win (p=32 m=256 at unit costs: 2 candidates are
  // built at the ranking's m, the level below 2p chunk activations not at all).
  const Problem ranking = at_ranking_m(problem);
  const TimeGrid grid(problem);
  auto busiest_work = [&](const Problem& at) {
    double busiest = 0;
    for (int d = 0; d < at.devices; ++d) busiest = std::max(busiest, at.device_work(d));
    return grid.ticks(busiest);
  };
  const Ticks ranking_bound = busiest_work(ranking);
  const EvalOptions span_only{.record_spans = false, .record_transfers = false, .record_memory = false};
  // Each level's first strictly shortest block at the ranking's m, ranked once.
  struct LevelBest {
    const VBlock* block = nullptr;
    Ticks span = 0;
    Schedule built;  // at the ranking's m
  };
  std::vector<std::optional<LevelBest>> ranked(levels.size());
  // No block of level i is shorter at the ranking's m than this: the busiest device's work, or
  // device 0's idle before its first backward within the level's peak (head_bound).
  auto level_floor = [&](std::size_t i) { return std::max(ranking_bound, head_bound(ranking, grid, levels[i].peak)); };
  auto level_best = [&](std::size_t i) -> const LevelBest& {
    if (!ranked[i]) {
      const Ticks floor = level_floor(i);
      LevelBest best;
      for (const VBlock& block : levels[i].blocks) {
        Schedule built = build(ranking, block, "v-auto", true);
        const Ticks span = grid.ticks(evaluate(ranking, built, span_only).metrics.span);
        if (!best.block || span < best.span) best = {&block, span, std::move(built)};
        if (best.span <= floor) break;
      }
      ranked[i] = std::move(best);
    }
    return *ranked[i];
  };
  // What v-auto picks when the largest peak that fits is level `top`'s: the better of that level
  // and the one below, the lower one on a tie (the smaller peak). When the upper level is already
  // shorter than anything the lower one can reach, the lower one is not ranked (at p=32 m=256 unit
  // costs: the level just below 2p chunk activations idles a chunk F on device 0 at least).
  auto pick = [&](std::size_t top) -> const LevelBest& {
    if (top + 1 == levels.size()) return level_best(top);
    const Ticks lower_floor = level_floor(top + 1);
    if (lower_floor > ranking_bound) {
      const LevelBest& upper = level_best(top);
      if (upper.span < lower_floor) return upper;
    }
    const LevelBest& lower = level_best(top + 1);
    if (lower.span <= ranking_bound) return lower;  // the upper level cannot be strictly shorter
    const LevelBest& upper = level_best(top);
    return lower.span <= upper.span ? lower : upper;
  };
  Schedule best = build_at_m(problem, *pick(0).block, pick(0).built);
  Ticks best_span = grid.ticks(evaluate(problem, best, span_only).metrics.span);
  // Toward monotone in the limit: what v-auto makes under a smaller limit fits this one too, so it
  // is made at the smaller levels (where it ranks other blocks) and taken when strictly shorter at
  // m. Ranking every level would make this exact but costs every block (p=32 m=256 at the 6.2B
  // costs: 7 s instead of 0.3 s), so the descent goes on only while the level just ranked beats, at
  // the ranking's m, every level above it (less memory ranks worse in the normal case), and stops
  // where nothing can be shorter (the busiest device's work at m).
  const Ticks bound = busiest_work(problem);
  auto ranked_above = [&](std::size_t below) {
    std::optional<Ticks> shortest;
    for (std::size_t i = 0; i < below; ++i) {
      if (ranked[i] && (!shortest || ranked[i]->span < *shortest)) shortest = ranked[i]->span;
    }
    return shortest;
  };
  for (std::size_t top = 1; top < levels.size() && best_span > bound; ++top) {
    const LevelBest& picked = pick(top);
    Schedule lower = build_at_m(problem, *picked.block, picked.built);
    const Ticks span = grid.ticks(evaluate(problem, lower, span_only).metrics.span);
    if (span < best_span) {
      best = std::move(lower);
      best_span = span;
    }
    const std::optional<Ticks> above = ranked_above(top + 1);
    // An unranked level below was beaten by the one above it without being built.
    if (top + 1 < levels.size() && above && (!ranked[top + 1] || ranked[top + 1]->span >= *above)) break;
  }
  return best;
}

}  // namespace zb
