// The group-interleaved family of PipeOffload (Wan et al., ICML 2025, section 3): interleaved
// placement, B and W split with each W right after its B, microbatches entering in groups of g.
// g = p is GIS (interleaved 1F1B's bubble at 1F1B's activation memory), g = ceil(p/2) GIS-H (about
// half of interleaved 1F1B's memory), and g = 1 the uniformly repeating order PipeOffload's own code
// offloads from (zbsim's po-h and po-f offload GIS-H's: docs/design.md section 21). Device i's order is that of a grid of unit slots, one per
// pass, in which every pass is placed by formula:
//   F of chunk c, microbatch j of group n:  3 k g c + 3 j + i + 3 g floor(c / (v / G)) + 3 g v n
//   B of chunk v-1-c: F's slot of chunk v-1, j = 0 on device i, + 3 (p-1-i) + 1, + the same terms
//   W: one slot after its B
// with k = ceil(ceil(p/2) / g) (chunk c+1 of a microbatch starts once chunk c has crossed every
// device: 3 k g >= p) and G = gcd(v, k) (the floor term keeps chunks whose slots would coincide
// apart). The grid's own timing (and PipeOffload's shifts and squeezing of it) changes no order; the
// engines time the order.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "sim/core/generators/generators.h"
#include "sim/support/error.h"

namespace zb {

Schedule make_group_interleaved(const Problem& problem, int group_size, std::string_view name) {
  const int p = problem.devices;
  const int v = problem.chunks;
  const int m = problem.microbatches;
  const int g = group_size;
  if (problem.placement != Placement::interleaved) {
    throw InputError(fmt::format("{}: needs the interleaved placement (got {})", name, placement_name(problem.placement)));
  }
  if (g < 1 || g > p) throw InputError(fmt::format("{}: group size {} is outside 1..p = {}", name, g, p));
  const std::int64_t k = ((p + 1) / 2 + g - 1) / g;
  const std::int64_t apart = v / std::gcd(static_cast<std::int64_t>(v), k);  // v / G
  const std::int64_t period = 3LL * g * v;                                  // one group's slots
  Schedule schedule = Schedule::empty(std::string(name), p);
  std::vector<std::pair<std::int64_t, Action>> slots;
  for (int i = 0; i < p; ++i) {
    slots.clear();
    const std::int64_t last_chunk_forward = 3 * k * g * (v - 1) + i + 3LL * g * ((v - 1) / apart);
    for (int n = 0; n * g < m; ++n) {
      for (int c = 0; c < v; ++c) {
        const std::int64_t offset = 3 * k * g * c + 3LL * g * (c / apart) + period * n;
        for (int j = 0; j < g && n * g + j < m; ++j) {
          const int mb = n * g + j;
          slots.push_back({offset + 3LL * j + i, {Pass::F, mb, c}});
          const std::int64_t backward = last_chunk_forward + 3LL * (p - 1 - i) + 1 + offset + 3LL * j;
          slots.push_back({backward, {Pass::B, mb, v - 1 - c}});
          slots.push_back({backward + 1, {Pass::W, mb, v - 1 - c}});
        }
      }
    }
    std::sort(slots.begin(), slots.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    // The formula gives every pass of a device its own slot (tests/core/test_offload.cpp checks it
    // over a range of shapes); two in one slot would make the order arbitrary.
    if (std::adjacent_find(slots.begin(), slots.end(), [](const auto& a, const auto& b) {
          return a.first == b.first;
        }) != slots.end()) {
      throw std::logic_error(fmt::format("{}: two passes in one slot on device {} (p={} v={} g={})", name, i, p, v, g));
    }
    auto& actions = schedule.devices[static_cast<std::size_t>(i)];
    actions.reserve(slots.size());
    for (const auto& slot : slots) actions.push_back(slot.second);
  }
  return schedule;
}

}  // namespace zb
