// V schedules with controllable memory (Qi et al., "Pipeline Parallelism with Controllable Memory"):
// a building block of period 6 repeated once per microbatch, squeezed, W put into the gaps.
// v-min and v-half are two fixed blocks; v-auto searches the blocks for the smallest bubble under
// the memory limit. Needs chunks = 2 and the V placement (device d holds stages d and 2p-1-d).
#pragma once

#include <array>
#include <optional>
#include <vector>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

// The passes of one microbatch on one device, in the order a microbatch reaches them in the V.
enum class VPass { f0, f1, b1, b0 };  // chunk-0 F, chunk-1 F, chunk-1 B, chunk-0 B

inline constexpr int kVBlockPeriod = 6;  // F, F, B, B and two W per microbatch per device

// block[d][pass]: the slot of microbatch 0's pass on device d; microbatch k runs at slot + 6k.
using VBlock = std::vector<std::array<int, 4>>;

// V-Min: 1/3 of ZB-V's activation memory, (p+4)/3 microbatches (integer division).
VBlock v_min_block(int p);
// V-Half: 1/2 of ZB-V's activation memory, (p+2)/2 microbatches.
VBlock v_half_block(int p);

// The block repeated m times, squeezed without raising the largest device peak (first with the W
// placed, then with W left to fill the gaps), W put into the gaps, then (as v-auto builds every
// block) the warm-up and cool-down rebuilt where that is shorter: the per-device order.
Schedule schedule_from_block(const Problem& problem, const VBlock& block);
// A block's schedule at n + `more` microbatches from its builds at n and n + 1
// (schedule_from_block), when on every device the build at n + 1 is the one at n with one period
// of six actions put in, the actions after it one microbatch later, and that period repeats the
// one before it one microbatch later: the steady phase, where the squeeze and the re-timing do the
// same at every period (the block repeats, and each period's memory nets to zero). The period is
// then put in `more` times; else nullopt. v-auto builds its picks at m > 2p + 2 this way from
// 2p + 1 and 2p + 2 and builds at m when this gives nullopt; on every problem checked the result
// is the build at m, action for action (tests/solver/test_v_controllable.cpp).
std::optional<Schedule> extend_steady_phase(const Schedule& at_n, const Schedule& at_n1, int more);

// The block's schedule at the problem's m as v-auto makes its pick: built at min(m, 2p + 1); for
// m > 2p + 2 first that build with its longest repeating run put in, kept when its span is the
// busiest device's work (nothing is shorter) and it holds no more memory than that build, else
// extend_steady_phase's, else built at m. So it is never longer, and never holds more memory, than
// schedule_from_block, and it is the same schedule unless both reach the busiest device's work.
Schedule v_auto_block_schedule(const Problem& problem, const VBlock& block);

// The searched blocks whose unsqueezed peak fits the limit (capped at p * M_B), by peak level from
// the largest down, each level in enumeration order. InputError when the limit is below every
// block's peak.
std::vector<std::vector<VBlock>> v_auto_levels(const Problem& problem);

// The blocks v-auto ranks at the limit: those of the two largest levels, smaller peak first, each
// level in enumeration order (the tie order).
std::vector<VBlock> v_auto_candidates(const Problem& problem);

Schedule make_v_min(const Problem& problem);
Schedule make_v_half(const Problem& problem);
// The first candidate with the smallest span (with the problem's costs, at min(m, 2p + 1)
// microbatches, on the time grid), made at m as v_auto_block_schedule does; replaced by what v-auto makes at a smaller limit
// when that is strictly shorter at m, so a larger limit never gives a longer schedule. The limit is
// the problem's, or p * M_B (ZB-V's memory) without one. Throws InputError when the limit is below
// every block's.
Schedule make_v_auto(const Problem& problem);

}  // namespace zb
