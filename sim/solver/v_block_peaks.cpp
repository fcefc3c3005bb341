// The largest device peak of a V building block's grid before the squeeze (see detail/v_block_peaks.h).
#include "sim/solver/detail/v_block_peaks.h"

#include <algorithm>
#include <cmath>

#include "sim/core/memory.h"
#include "sim/support/error.h"

namespace zb::detail {

BlockPeaks::BlockPeaks(const Problem& problem) : m_(problem.microbatches) {
  std::vector<double> deltas;
  for (int d = 0; d < problem.devices; ++d) {
    const DeviceMemory memory = device_memory(problem, d);
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

std::optional<double> BlockPeaks::largest_peak(const VBlock& block, std::optional<double> cap) {
  double largest = 0;
  for (std::size_t d = 0; d < block.size(); ++d) {
    largest = std::max(largest, device_peak(memory_of_[d], block[d]));
    if (cap && !fits_limit(largest, *cap)) return std::nullopt;  // first_over_limit's rule, no vector
  }
  return largest;
}

std::optional<std::size_t> BlockPeaks::repeating_shape(int id, const std::array<int, 4>& offset) const {
  const bool in_v_order = offset[0] < offset[1] && offset[1] < offset[2] && offset[2] < offset[3];
  if (!jumpable_[static_cast<std::size_t>(id)] || !in_v_order || m_ < settled_m(offset[3]) ||
      offset[3] + 4 * kVBlockPeriod > kExactTerms || periods_before_b0(offset) < 1) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(id) * 216 +
         static_cast<std::size_t>(36 * (offset[1] % 6) + 6 * (offset[2] % 6) + offset[3] % 6);
}

std::optional<double> BlockPeaks::known_peak(int id, const std::array<int, 4>& row) const {
  const std::array<int, 4> offset = {0, row[1] - row[0], row[2] - row[0], row[3] - row[0]};
  const std::optional<std::size_t> shape = repeating_shape(id, offset);
  if (!shape || *shape >= from_first_b_.size() || !from_first_b_[*shape]) return std::nullopt;
  const FromFirstB& rest = *from_first_b_[*shape];
  const DeviceMemory& memory = memories_[static_cast<std::size_t>(id)];
  const std::array<int, 2> count = forwards_before_b(offset, settled_m(offset[3]));
  const double before = count[0] * memory.f[0] + count[1] * memory.f[1];  // forwards_level's exact sum
  return before + std::max(rest.first_high, (periods_before_b0(offset) - 1) * rest.per_period + rest.last_high);
}

double BlockPeaks::device_peak(int id, const std::array<int, 4>& row) {
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
  for (int kind = kF0; kind < kW; ++kind) {
    AtPosition& at = at_position[static_cast<std::size_t>(offset[kind] % kVBlockPeriod)];
    if (at.kind != kEmpty) throw Error("v-auto: internal error: two passes of a block row share a position");
    at = {kind, offset[kind], static_cast<unsigned>(kVBlockPeriod * n),
          is_f(kind) ? memory.f[chunk_of(kind)] : memory.b[chunk_of(kind)]};
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

std::array<int, 2> BlockPeaks::forwards_before_b(const std::array<int, 4>& offset, int n) {
  const int first_b = std::min(offset[2], offset[3]);
  std::array<int, 2> count{};
  for (int c = 0; c < 2; ++c) {
    if (offset[c] < first_b) count[c] = std::min(n, (first_b - offset[c] + kVBlockPeriod - 1) / kVBlockPeriod);
  }
  return count;
}

double BlockPeaks::forwards_level(const DeviceMemory& memory, const std::array<int, 4>& offset, int n) const {
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

bool BlockPeaks::sums_exactly(const std::vector<double>& deltas) {
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

}  // namespace zb::detail
