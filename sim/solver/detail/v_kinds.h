// The V grid's cell kinds (a chunk's F or B as VPass numbers them, then W) and a device's memory per pass.
#pragma once

#include <array>

#include "sim/core/action.h"
#include "sim/core/memory.h"
#include "sim/core/problem.h"
#include "sim/solver/detail/v_controllable.h"

namespace zb::detail {

// A microbatch's four passes on a device, in VPass's order (the order it reaches them in the V),
// then W: a W carries no chunk of its own on the grid (the j-th W frees the j-th B in slot order).
inline constexpr int kF0 = static_cast<int>(VPass::f0);
inline constexpr int kF1 = static_cast<int>(VPass::f1);
inline constexpr int kB1 = static_cast<int>(VPass::b1);
inline constexpr int kB0 = static_cast<int>(VPass::b0);
inline constexpr int kW = 4;
inline constexpr int kKinds = 5;
inline constexpr int kEmpty = -1;

// The core's pass of a kind (F, B or W).
constexpr Pass pass_of(int kind) { return kind == kW ? Pass::W : kind == kF0 || kind == kF1 ? Pass::F : Pass::B; }
constexpr int chunk_of(int kind) { return kind == kF1 || kind == kB1 ? 1 : 0; }
constexpr bool is_f(int kind) { return kind == kF0 || kind == kF1; }
constexpr bool is_b(int kind) { return kind == kB1 || kind == kB0; }
// Whether the kind's input comes from device d - 1 (down the V: chunk-0 F, chunk-1 B) or from
// device d + 1 (back up it: chunk-1 F, chunk-0 B).
constexpr bool input_from_device_before(int kind) { return kind == kF0 || kind == kB1; }
constexpr bool input_from_device_after(int kind) { return kind == kF1 || kind == kB0; }

// Activation memory per pass on one device, by chunk (net deltas, as peak_memory_by_order counts).
struct DeviceMemory {
  std::array<double, 2> f{}, b{}, w{};
};

inline DeviceMemory device_memory(const Problem& problem, int d) {
  DeviceMemory memory;
  for (int c = 0; c < 2; ++c) {
    const int stage = problem.stage_of(d, c);
    memory.f[c] = memory_delta(problem, Pass::F, stage).net();
    memory.b[c] = memory_delta(problem, Pass::B, stage).net();
    memory.w[c] = memory_delta(problem, Pass::W, stage).net();
  }
  return memory;
}

}  // namespace zb::detail
