// The executor's model: configuration, deterministic initial weights, partition, synthetic data.
#include "exec/runtime/model_config.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "sim/support/error.h"

namespace zb::exec {

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// Uniform in [-1, 1), a pure function of (stream, index): no generator state, any order.
float uniform(std::uint64_t stream, std::uint64_t index) {
  const std::uint64_t bits = splitmix64(stream ^ splitmix64(index));
  return static_cast<float>(static_cast<double>(bits >> 40) / static_cast<double>(1ULL << 23) - 1.0);
}

std::uint64_t stream_id(std::uint64_t seed, std::uint64_t kind, std::uint64_t a, std::uint64_t b) {
  return splitmix64(splitmix64(splitmix64(seed) ^ (kind << 56)) ^ (a << 28) ^ b);
}

std::vector<float> uniform_values(std::uint64_t stream, std::size_t count, float scale) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = scale * uniform(stream, i);
  return values;
}

}  // namespace

void ModelConfig::validate(int stages) const {
  if (layers < 1) throw InputError(fmt::format("--layers {}: need at least 1 layer", layers));
  if (hidden < 1) throw InputError(fmt::format("--hidden {}: need at least 1", hidden));
  if (microbatch_size < 1) {
    throw InputError(fmt::format("--microbatch-size {}: need at least 1", microbatch_size));
  }
  if (layers < stages) {
    throw InputError(fmt::format("--layers {}: fewer layers than the {} stages (p x chunks); every "
                                 "stage needs at least one layer", layers, stages));
  }
}

const char* param_name(int index) {
  switch (index) {
    case kW1: return "W1";
    case kB1: return "b1";
    case kW2: return "W2";
    case kB2: return "b2";
    default: return "?";
  }
}

std::array<int, 2> param_shape(const ModelConfig& config, int index) {
  const int h = config.hidden;
  switch (index) {
    case kW1: return {4 * h, h};
    case kB1: return {1, 4 * h};
    case kW2: return {h, 4 * h};
    default: return {1, h};
  }
}

std::vector<float> initial_param(const ModelConfig& config, int layer, int index) {
  const auto [rows, cols] = param_shape(config, index);
  const auto count = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  // Fan-in scaling; W2 and the biases smaller so deep residual stacks stay well-conditioned.
  float scale = 0.01f;
  if (index == kW1) scale = 1.0f / std::sqrt(static_cast<float>(config.hidden));
  if (index == kW2) scale = 0.5f / std::sqrt(static_cast<float>(config.inner()));
  return uniform_values(stream_id(config.seed, 1, static_cast<std::uint64_t>(layer),
                                  static_cast<std::uint64_t>(index)),
                        count, scale);
}

double max_abs_difference(const ModelWeights& a, const ModelWeights& b) {
  if (a.size() != b.size()) return std::numeric_limits<double>::infinity();
  double most = 0;
  for (std::size_t layer = 0; layer < a.size(); ++layer) {
    for (int p = 0; p < kParamsPerLayer; ++p) {
      const auto& x = a[layer][static_cast<std::size_t>(p)];
      const auto& y = b[layer][static_cast<std::size_t>(p)];
      if (x.size() != y.size()) return std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < x.size(); ++i) {
        const double diff = std::abs(static_cast<double>(x[i]) - static_cast<double>(y[i]));
        // NaN never compares greater: count any NaN mismatch as infinitely different.
        if (std::isnan(x[i]) != std::isnan(y[i])) return std::numeric_limits<double>::infinity();
        if (diff > most) most = diff;
      }
    }
  }
  return most;
}

LayerRange layers_of_stage(int stage, int stages, int layers) {
  const int base = layers / stages;
  const int extra = layers % stages;
  const int begin = stage * base + std::min(stage, extra);
  return {begin, begin + base + (stage < extra ? 1 : 0)};
}

std::vector<float> synthetic_input(const ModelConfig& config, int step, int microbatch) {
  const auto count = static_cast<std::size_t>(config.microbatch_size) * static_cast<std::size_t>(config.hidden);
  return uniform_values(stream_id(config.seed, 2, static_cast<std::uint64_t>(step),
                                  static_cast<std::uint64_t>(microbatch)),
                        count, 1.0f);
}

std::vector<float> synthetic_target(const ModelConfig& config, int step, int microbatch) {
  const auto count = static_cast<std::size_t>(config.microbatch_size) * static_cast<std::size_t>(config.hidden);
  return uniform_values(stream_id(config.seed, 3, static_cast<std::uint64_t>(step),
                                  static_cast<std::uint64_t>(microbatch)),
                        count, 0.5f);
}

}  // namespace zb::exec
