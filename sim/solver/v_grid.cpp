// The V building block's slot grid (see detail/v_grid.h): the blocks are laid out on a grid of unit
// slots, one pass per device and slot; the squeeze moves passes to earlier free slots on that grid,
// and only the resulting per-device order leaves this file (the evaluator times it for real).
#include "sim/solver/detail/v_grid.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "sim/solver/detail/v_kinds.h"

namespace zb::detail {

namespace {

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
      for (int kind = kF0; kind < kW; ++kind) {
        device.slot[kind].resize(static_cast<std::size_t>(m_));
        for (int k = 0; k < m_; ++k) place(d, kind, k, block[d][kind] + kVBlockPeriod * k);
      }
      memory_[d] = device_memory(problem, d);
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
      if (phase == Phase::warm_up && kind == kB0 && d == 0 && keep_steady) phase = Phase::steady;
      if (phase == Phase::steady) {
        if (kind == kF0 && k == m_ - 1) phase = Phase::cool_down;
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

  // Lays one end out again with `relay` (false when a pass cannot be laid), then re-times the grid;
  // leaves the grid as it was and returns false when `relay` fails, a dependency would break, or
  // the largest device peak would rise.
  template <typename Relay>
  bool relaid_within_peak(Relay&& relay) {
    const std::vector<DeviceSlots> saved = devices_;
    const double before = largest_peak(false);
    if (!relay() || !dependencies_hold()) {
      devices_ = saved;
      return false;
    }
    compact();
    if (largest_peak(false) > before * (1 + 1e-12)) {
      devices_ = saved;
      return false;
    }
    return true;
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
    return relaid_within_peak([&] {
      const int held = most_activations_held();
      const int chunk0_b = std::min((held + 1) / 2, m_);
      const int chunk1_b_cap = std::min(held - chunk0_b, m_);
      const int start = devices_[0].slot[kF1][m_ - 1];
      for (int d = 0; d < p_; ++d) {
        DeviceSlots& device = devices_[d];
        const int chunk1_b = std::min(d + 1, chunk1_b_cap);
        for (int k = m_ - chunk0_b; k < m_; ++k) device.cell[device.slot[kB0][k]] = kEmpty;
        for (int k = m_ - chunk1_b; k < m_; ++k) device.cell[device.slot[kB1][k]] = kEmpty;
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
          if (!lay(kB0, m_ - 1 - j, start - d + 2 * p_ - 2 * j)) return false;
        }
        for (int j = 0; j < chunk1_b; ++j) {
          if (!lay(kB1, m_ - 1 - j, start + 1 + d - 2 * j)) return false;
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
          if (waiting < 0) return false;  // a W kept before its B
        }
        if (waiting > 0) return false;  // no room left for every W
      }
      return true;
    });
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
    return relaid_within_peak([&] {
      const int held = std::min(most_activations_held(), 2 * p_);
      for (int d = 0; d < p_; ++d) {
        DeviceSlots& device = devices_[d];
        const int first_b0 = device.slot[kB0][0];
        std::array<int, kKinds> count{};  // passes of each kind before the first chunk-0 B
        for (int kind : {kF0, kF1, kB1, kW}) {
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
        for (int i = 0; i < 2 * (p_ - 1 - d) && fits; ++i) fits = lay(kF0, f0_first);
        for (int i = 0; i <= d && fits; ++i) fits = lay(kF0, f0_first) && lay(kF1, f1_first);
        while (fits &&
               (laid[kF0] < count[kF0] || laid[kF1] < count[kF1] || laid[kB1] < count[kB1] || laid[kW] < count[kW])) {
          fits = lay(kB1, m_) && lay(kW, m_) && (laid[kF1] < count[kF1] ? lay(kF1, m_) : lay(kF0, m_));
        }
        if (!fits) return false;
        for (int w : later_w) place(d, kW, static_cast<int>(device.slot[kW].size()), w);
      }
      return true;
    });
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
        level += is_f(kind) ? 1 : kind == kW ? -1 : 0;
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
        const Action action{pass_of(kind), k, chunk_of(kind)};
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
    if (input_from_device_before(kind) && d > 0) slot = std::max(slot, devices_[d - 1].slot[kind][k]);
    if (input_from_device_after(kind) && d + 1 < p_) slot = std::max(slot, devices_[d + 1].slot[kind][k]);
    if (kind > kF0) slot = std::max(slot, device.slot[kind - 1][k]);
    return slot;
  }

  int earliest(int d, int kind, int k) const { return dependency_slot(d, kind, k) + 1; }

  // The j-th smallest slot among the device's B of both chunks (each list ascends).
  static int nth_b_slot(const DeviceSlots& device, int j) {
    const auto& x = device.slot[kB1];
    const auto& y = device.slot[kB0];
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
    } else if (is_f(kind)) {
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
    return is_f(kind) ? memory.f[chunk_of(kind)] : memory.b[chunk_of(kind)];
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
      } else if (is_f(kind)) {
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
        if (input_from_device_before(kind) && d > 0) ready = std::max(ready, new_slot(d - 1, kind, k) + 1);
        if (input_from_device_after(kind) && d + 1 < p_) ready = std::max(ready, new_slot(d + 1, kind, k) + 1);
        if (kind > kF0) ready = std::max(ready, new_slot(d, kind - 1, k) + 1);
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

Schedule squeeze_into_schedule(VGrid grid, std::string name, bool rebuild) {
  grid.squeeze(true);
  grid.drop_w();
  grid.squeeze(false);
  grid.drop_w();
  grid.put_w();
  if (rebuild) rebuild_ends(grid);
  return grid.to_schedule(std::move(name));
}

}  // namespace

Schedule squeezed_block_schedule(const Problem& problem, const VBlock& block, std::string name, bool rebuild) {
  VGrid grid(problem, block);
  grid.put_w();
  return squeeze_into_schedule(std::move(grid), std::move(name), rebuild);
}

}  // namespace zb::detail
