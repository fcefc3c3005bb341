// How long one kernel runs on a GPU preset: GEMMs by their shape, memory-bound passes by their
// bytes, collectives of tensor parallelism by their ring steps (docs/design.md section 3).
#pragma once

#include "models/hardware.h"

namespace zb::models {

// C (M x N) = A (M x K) B (K x N), `batch` independent ones in one launch (attention's heads).
struct GemmShape {
  double m = 0, n = 0, k = 0;
  double batch = 1;
  double output_bytes = 2;  // per element of C: 2 for 16-bit, 8 to accumulate into an fp32 gradient
  bool fp8 = false;         // A and B in FP8 (1 byte), at the GPU's FP8 rate
};

// A first-principles roofline (NVIDIA, "Matrix Multiplication Background User's Guide",
// DU-09799-001, sections 2.3 and 3): the output is cut into tiles that thread blocks compute one
// per SM at a time, so the run takes whole waves of sm_count tiles, each tile a whole number of
// K steps. Compute time = waves x (flops of one padded tile) / (peak per SM x sustained fraction);
// the tile is the one of cuBLAS's large tiles (256x128, 128x256, 128x128, K step 64) that finishes
// first (kernel_time.cpp). Memory time = bytes of A, B and C / (HBM bandwidth x sustained
// fraction). The kernel takes the longer of the two.
double gemm_ms(const HardwareSpec& gpu, const GemmShape& shape);
// The compute side alone at `sustained_fraction` of the peak: a GEMM inside a fused kernel (flash
// attention, at the GPU's attention_sustained_fraction) whose operands stay on chip.
double tensor_core_ms(const HardwareSpec& gpu, const GemmShape& shape, double sustained_fraction);

// Useful flops / (peak flop/s x time): what the shape leaves of the peak (tile, wave and
// sustained-fraction losses; 0.8 at most with the roofline's fraction).
double gemm_efficiency(const HardwareSpec& gpu, const GemmShape& shape);

// An elementwise or reduction pass (norm, softmax, activation, dropout, cross-entropy) limited by
// HBM: bytes read and written / (bandwidth x sustained fraction).
double memory_pass_ms(const HardwareSpec& gpu, double bytes);

// Ring collectives over `ranks` GPUs on one link per GPU (NVLink inside a node), of a tensor of
// `bytes` in full: an all-reduce moves 2 (r-1)/r of it through every GPU in 2 (r-1) steps, a
// reduce-scatter or an all-gather (r-1)/r in r-1 steps; each step pays the link's latency, and
// the data flows at the link's bandwidth times the GPU's collective efficiency. 0 for one rank.
double all_reduce_ms(const HardwareSpec& gpu, const Link& link, int ranks, double bytes);
double reduce_scatter_ms(const HardwareSpec& gpu, const Link& link, int ranks, double bytes);  // = all-gather

// An all-to-all over `ranks` GPUs, `ranks_per_node` of them in each node: every GPU sends `bytes`
// spread evenly over the group, 1/ranks of it to itself; what goes to the others of its node takes
// `intra`, the rest `inter` (its share of the node's NICs), both at once, so the slower decides,
// at the GPU's collective efficiency, plus one latency of the slowest link used.
double all_to_all_ms(const HardwareSpec& gpu, const Link& intra, const Link& inter, int ranks, int ranks_per_node,
                     double bytes);

}  // namespace zb::models
