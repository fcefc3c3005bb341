// Parameters, gradients and optimizer state per GPU.
#include "models/static_memory.h"

#include <fmt/format.h>

#include <algorithm>

namespace zb::models {

std::string StaticMemory::describe() const {
  std::string text =
      fmt::format("parameters {:.1f}, gradients {:.1f}, optimizer state {:.1f}", parameters_GB, gradients_GB, optimizer_GB);
  if (gathered_GB > 0) text += fmt::format(", gathered layers {:.1f}", gathered_GB);
  return text;
}

namespace {

// Parameters of a layer every GPU of a tensor-parallel group keeps whole.
double replicated_layer_params(const TransformerSpec& model) {
  const double h = model.hidden;
  const double norms = model.rms_norm ? 1 : 2;
  // two norms; output and down biases; MLA's projections down to the latents and their norms
  return 2 * norms * h + (model.bias ? 2 * h : 0) +
         (model.mla() ? h * model.mla_down_width() + norms * (model.q_lora_rank + model.kv_lora_rank) : 0);
}

}  // namespace

double layer_expert_params_per_gpu(const ModelSetup& setup) {
  return setup.model.expert_params() / setup.parallel.expert;
}

double layer_params_per_gpu(const ModelSetup& setup) {
  const double replicated = replicated_layer_params(setup.model);
  const double dense = setup.model.layer_params() - setup.model.expert_params() - replicated;
  return dense / setup.parallel.tensor + replicated + layer_expert_params_per_gpu(setup);
}

double embedding_params_per_gpu(const ModelSetup& setup) {
  const TransformerSpec& model = setup.model;
  const double table = static_cast<double>(model.vocab) * model.hidden / setup.parallel.tensor;
  return table + (model.learned_positions ? static_cast<double>(model.seq_len) * model.hidden : 0.0);
}

double output_params_per_gpu(const ModelSetup& setup) {
  const TransformerSpec& model = setup.model;
  return (model.rms_norm ? 1 : 2) * static_cast<double>(model.hidden) +
         static_cast<double>(model.vocab) * model.hidden / setup.parallel.tensor;
}

StaticMemory static_memory(const ModelSetup& setup, double params, double largest_layer_params,
                           double expert_params) {
  const Parallelism& parallel = setup.parallel;
  const double weight_bytes = std::min(2.0, setup.bytes_per_param);
  const double gradient_bytes = std::min(2.0, setup.bytes_per_param - weight_bytes);
  const double optimizer_bytes = setup.bytes_per_param - weight_bytes - gradient_bytes;
  const double d = parallel.gradient_replicas();
  const double d_experts = parallel.expert_gradient_replicas();
  // Bytes of `bytes_per` per parameter, split over the replicas when `sharded`.
  const auto GB = [&](double bytes_per, bool sharded) {
    return ((params - expert_params) / (sharded ? d : 1) + expert_params / (sharded ? d_experts : 1)) * bytes_per * 1e-9;
  };
  StaticMemory memory;
  memory.parameters_GB = GB(weight_bytes, parallel.shards_parameters());
  memory.gradients_GB = GB(gradient_bytes, parallel.shards_gradients());
  memory.optimizer_GB = GB(optimizer_bytes, parallel.shards_optimizer());
  if (parallel.shards_parameters() && d > 1) memory.gathered_GB = 2 * 2 * largest_layer_params * 1e-9;
  return memory;
}

}  // namespace zb::models
