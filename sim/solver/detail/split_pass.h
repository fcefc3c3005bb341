// The solvers' one numbering of the split passes: core's Pass, whose F, B and W are 0, 1 and 2.
#pragma once

#include <array>
#include <cstddef>

#include "sim/core/action.h"

namespace zb {

// The solvers' tables hold one entry per split pass (costs, memory deltas, end times), indexed by
// split_index; a fused BW never reaches them (list_timing refuses it).
inline constexpr int kSplitPassCount = 3;
inline constexpr std::array<Pass, kSplitPassCount> kSplitPasses = {Pass::F, Pass::B, Pass::W};
static_assert(static_cast<int>(Pass::F) == 0 && static_cast<int>(Pass::B) == 1 && static_cast<int>(Pass::W) == 2);

// F 0, B 1, W 2.
constexpr int split_index(Pass pass) { return static_cast<int>(pass); }
// The split pass at index 0..2.
constexpr Pass split_pass(int index) { return static_cast<Pass>(index); }

// One of three values by split pass (a stage's cost or memory delta): f, b or w.
template <typename T>
constexpr T& of_pass(Pass pass, T& f, T& b, T& w) {
  return pass == Pass::F ? f : pass == Pass::B ? b : w;
}

}  // namespace zb
