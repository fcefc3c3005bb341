// The executor's model: L residual MLP blocks y = x + W2 gelu(W1 x + b1) + b2, fp32, MSE loss.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace zb::exec {

struct ModelConfig {
  int layers = 8;
  int hidden = 256;          // h; the inner width is 4h
  int microbatch_size = 4;   // rows per microbatch
  std::uint64_t seed = 1;    // weights and synthetic data

  int inner() const { return 4 * hidden; }
  // Throws InputError naming the flag when a value is out of range or the stages outnumber layers.
  void validate(int stages) const;
};

// The parameters of one block, in this fixed order everywhere (optimizer, norms, files).
enum ParamIndex : int { kW1 = 0, kB1 = 1, kW2 = 2, kB2 = 3 };
inline constexpr int kParamsPerLayer = 4;
const char* param_name(int index);

// Shape (rows, cols) of parameter `index`: W1 [4h x h], b1 [1 x 4h], W2 [h x 4h], b2 [1 x h].
std::array<int, 2> param_shape(const ModelConfig& config, int index);

// Deterministic initial values of one parameter of one layer (independent of the partition).
std::vector<float> initial_param(const ModelConfig& config, int layer, int index);

// Weights on the host: weights[layer][param] row-major.
using ModelWeights = std::vector<std::array<std::vector<float>, kParamsPerLayer>>;

// The largest |a - b| over all weights; infinity when the shapes differ.
double max_abs_difference(const ModelWeights& a, const ModelWeights& b);

// The layers [begin, end) of a stage: L layers over S stages, the first L % S stages one more.
struct LayerRange {
  int begin = 0;
  int end = 0;
  int count() const { return end - begin; }
};
LayerRange layers_of_stage(int stage, int stages, int layers);

// Synthetic data: input [B x h] and target [B x h] of a microbatch in a step, from the seed.
std::vector<float> synthetic_input(const ModelConfig& config, int step, int microbatch);
std::vector<float> synthetic_target(const ModelConfig& config, int step, int microbatch);

}  // namespace zb::exec
