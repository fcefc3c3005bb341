// What a GPU holds whatever the schedule: parameters, gradients and optimizer state, with the
// data-parallel sharding of ZeRO-1/2/3 and FSDP.
#pragma once

#include <string>

#include "models/model_setup.h"

namespace zb::models {

// GB (1e9 bytes) on one GPU of a pipeline device.
struct StaticMemory {
  double parameters_GB = 0;
  double gradients_GB = 0;
  double optimizer_GB = 0;
  double gathered_GB = 0;  // ZeRO-3 / FSDP: the whole parameters of the layers being computed

  double total_GB() const { return parameters_GB + gradients_GB + optimizer_GB + gathered_GB; }
  // "parameters 1.5, gradients 1.5, optimizer state 9.2[, gathered layers 0.1]" (GB)
  std::string describe() const;
};

// Parameters of one GPU of a tensor-parallel group: the GEMM weights (and their biases) split t
// ways, the norms and the row-parallel GEMMs' biases whole on every GPU, the routed experts split
// over expert parallelism (e ways, each whole); and the experts' part of it.
double layer_params_per_gpu(const ModelSetup& setup);
double layer_expert_params_per_gpu(const ModelSetup& setup);
double embedding_params_per_gpu(const ModelSetup& setup);
double output_params_per_gpu(const ModelSetup& setup);

// `params` of one GPU at bytes_per_param: 2 bytes of bf16 weights, 2 of bf16 gradients, the rest
// optimizer state (12 by default: fp32 master weights and Adam's two moments), the optimizer state
// split over the d data-parallel GPUs by every sharding, the gradients by ZeRO-2 and up, the
// parameters by ZeRO-3 and FSDP, which then hold two layers whole (the one computing, the one
// prefetched) in 16 bits: 4 bytes x `largest_layer_params`. The `expert_params` among `params`
// split their state over the GPUs that hold the same experts (t x c x d / e) instead.
StaticMemory static_memory(const ModelSetup& setup, double params, double largest_layer_params,
                           double expert_params = 0);

}  // namespace zb::models
