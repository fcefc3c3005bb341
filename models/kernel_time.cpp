// The roofline of one kernel: tile and wave quantisation for GEMMs, bandwidth for the rest.
#include "models/detail/kernel_time.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace zb::models {

namespace {

struct Tile {
  double m, n;
};

// cuBLAS's large bf16 tiles (the guide's section 2.3 lists 256x128, 128x256 and 128x128 among
// its tile sizes; smaller tiles trade data reuse for parallelism, which the model leaves out, so
// only the large ones are offered). A thread block steps through K 64 elements at a time (one
// 128-byte row of 16-bit values per step, the alignment the guide asks of A100 operands).
constexpr Tile kTiles[] = {{256, 128}, {128, 256}, {128, 128}};
constexpr double kTileK = 64;

// Tensor-core kernels load their operands 16 bytes at a time; a dimension that is not a whole
// number of such vectors (8 16-bit or 16 FP8 elements) leaves cuBLAS kernels with narrower loads
// or none on tensor cores (NVIDIA, "Matrix Multiplication Background User's Guide", "Tensor Core
// Requirements": multiples of 16 bytes run most efficiently). Attention's GEMMs over a head
// width such as 14400 / 64 = 225 are the case that matters.
bool aligned(const GemmShape& shape) {
  const double vector = shape.fp8 ? 16 : 8;
  for (const double dimension : {shape.m, shape.n, shape.k}) {
    if (std::fmod(dimension, vector) != 0) return false;
  }
  return true;
}

// Milliseconds of tensor-core time for the GEMM with tile `tile`.
double compute_ms(const HardwareSpec& gpu, const GemmShape& shape, const Tile& tile, double sustained_fraction) {
  const double tiles = shape.batch * std::ceil(shape.m / tile.m) * std::ceil(shape.n / tile.n);
  const double waves = std::ceil(tiles / gpu.sm_count);
  const double padded_k = std::ceil(shape.k / kTileK) * kTileK;
  const double flops_per_tile = 2 * tile.m * tile.n * padded_k;
  const double peak = shape.fp8 ? gpu.peak_tflops_fp8 : gpu.peak_tflops_bf16;
  const double alignment = aligned(shape) ? 1 : gpu.efficiency.misaligned_gemm_fraction;
  const double flops_per_ms_per_sm = peak * 1e9 * sustained_fraction * alignment / gpu.sm_count;
  return waves * flops_per_tile / flops_per_ms_per_sm;
}

}  // namespace

double tensor_core_ms(const HardwareSpec& gpu, const GemmShape& shape, double sustained_fraction) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.batch <= 0) return 0;
  double compute = std::numeric_limits<double>::infinity();
  for (const Tile& tile : kTiles) compute = std::min(compute, compute_ms(gpu, shape, tile, sustained_fraction));
  return compute;
}

double gemm_ms(const HardwareSpec& gpu, const GemmShape& shape) {
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.batch <= 0) return 0;
  const double compute = tensor_core_ms(gpu, shape, gpu.efficiency.gemm_sustained_fraction);
  const double operand = shape.fp8 ? 1 : 2;
  const double bytes =
      shape.batch * (operand * shape.m * shape.k + operand * shape.k * shape.n + shape.output_bytes * shape.m * shape.n);
  return std::max(compute, memory_pass_ms(gpu, bytes));
}

double gemm_efficiency(const HardwareSpec& gpu, const GemmShape& shape) {
  const double ms = gemm_ms(gpu, shape);
  if (ms <= 0) return 0;
  return 2 * shape.batch * shape.m * shape.n * shape.k / (gpu.peak_tflops_bf16 * 1e9 * ms);
}

double memory_pass_ms(const HardwareSpec& gpu, double bytes) {
  return bytes / (gpu.memory_bandwidth_GBps * 1e6 * gpu.efficiency.memory_sustained_fraction);
}

double all_reduce_ms(const HardwareSpec& gpu, const Link& link, int ranks, double bytes) {
  return 2 * reduce_scatter_ms(gpu, link, ranks, bytes);
}

double reduce_scatter_ms(const HardwareSpec& gpu, const Link& link, int ranks, double bytes) {
  if (ranks <= 1) return 0;
  const double r = ranks;
  const double bandwidth = link.bandwidth_GBps * gpu.efficiency.collective_efficiency;
  return (r - 1) * link.latency_us * 1e-3 + (r - 1) / r * bytes / (bandwidth * 1e6);
}

double all_to_all_ms(const HardwareSpec& gpu, const Link& intra, const Link& inter, int ranks, int ranks_per_node,
                     double bytes) {
  if (ranks <= 1) return 0;
  const double r = ranks;
  const double local = std::clamp(ranks_per_node, 1, ranks);
  const double efficiency = gpu.efficiency.collective_efficiency;
  const double intra_ms = (local - 1) / r * bytes / (intra.bandwidth_GBps * efficiency * 1e6);
  const double inter_ms = (r - local) / r * bytes / (inter.bandwidth_GBps * efficiency * 1e6);
  const double latency_us = local < r ? std::max(intra.latency_us, inter.latency_us) : intra.latency_us;
  return latency_us * 1e-3 + std::max(intra_ms, inter_ms);
}

}  // namespace zb::models
