// The largest device peak of a V building block's grid before the squeeze, found without building the grid.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <unordered_map>
#include <vector>

#include "sim/core/problem.h"
#include "sim/solver/detail/v_kinds.h"
#include "sim/solver/detail/v_controllable.h"

namespace zb::detail {

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
  explicit BlockPeaks(const Problem& problem);

  // The largest device peak, or nullopt as soon as a device's goes over `cap` (when given).
  std::optional<double> largest_peak(const VBlock& block, std::optional<double> cap = std::nullopt);

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
  std::optional<std::size_t> repeating_shape(int id, const std::array<int, 4>& offset) const;

  // device_peak when what the row adds from its first B on is known already (the searched blocks'
  // usual case): the forwards before it and the formula, no walk, or nullopt.
  std::optional<double> known_peak(int id, const std::array<int, 4>& row) const;

  double device_peak(int id, const std::array<int, 4>& row);

  // How many forwards of each chunk run before the row's first B (of microbatches below n).
  static std::array<int, 2> forwards_before_b(const std::array<int, 4>& offset, int n);

  // The level before the row's first B: its forwards there (of microbatches below n), chunk 0's
  // then chunk 1's when the deltas sum exactly, else in slot order (the same sums, in the walk's
  // order).
  double forwards_level(const DeviceMemory& memory, const std::array<int, 4>& offset, int n) const;

  // Whether sums of up to kExactTerms of these deltas are exact in a double in any order and
  // grouping: all are multiples of one 2^-e (e up to 40: bytes, chunk activations and their halves
  // and quarters) of at most 2^40 such units, so every sum is an integer count of units under 2^52.
  static constexpr int kExactTerms = 1 << 12;
  static bool sums_exactly(const std::vector<double>& deltas);
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

}  // namespace zb::detail
