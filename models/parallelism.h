// How one pipeline device is spread over GPUs and what it keeps: tensor, context and data
// parallelism, sequence parallelism, optimizer sharding (ZeRO, FSDP) and activation recomputation.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>

namespace zb::models {

// What backward recomputes instead of keeping (Korthikanti et al., "Reducing Activation
// Recomputation in Large Transformer Models"): selective recomputes the attention core (scores,
// softmax, dropout, scores x V), so its s x s tensors are not kept; full keeps only each layer's
// input and reruns the layer's forward at the start of B.
enum class Recompute { none, selective, full };

// What selective recomputation covers (Megatron's --recompute-modules; "recompute_modules" in a
// scenario): the attention core (core_attn, the default), the norms' outputs (layernorm), MLA's
// up-projections and RoPE (mla_up_proj), the experts' activation function (moe_act). Each drops
// its outputs from what F keeps and reruns its forward in B.
struct RecomputeModules {
  bool core_attn = true;
  bool layernorm = false;
  bool mla_up_proj = false;
  bool moe_act = false;
};

// The flag of RecomputeModules a Megatron module name sets, or nullptr for a module zbsim does not
// model; the one list of those names.
bool* recompute_module_flag(RecomputeModules& modules, std::string_view name);

// Which of the training state a data-parallel group of d GPUs splits d ways: ZeRO-1 the optimizer
// state, ZeRO-2 also the gradients, ZeRO-3 (and FSDP's full sharding, the same memory) also the
// parameters, which are gathered layer by layer when needed.
enum class Sharding { none, zero1, zero2, zero3, fsdp };

struct Parallelism {
  int tensor = 1;                  // t: GPUs of one pipeline device, on one node's intra-node links
  bool sequence_parallel = false;  // norms and dropout split over the t GPUs along the sequence
  // Each all-gather and reduce-scatter of sequence parallelism runs beside the GEMM it feeds or
  // follows (Transformer Engine's userbuffers under Megatron's --tp-comm-overlap, torchtitan's
  // async TP): the GEMM is cut into t chunks and each chunk's transfer hides behind another
  // chunk's compute, so the pair takes max(g, c) + min(g, c) / t instead of g + c.
  bool tp_comm_overlap = false;
  // c: GPUs one sequence is split over (ring attention, as Megatron's and torchtitan's context
  // parallelism run it): each holds s/c of every token-wise tensor and passes its keys and values
  // around the ring for the attention; they hold the same weights, so their gradients are reduced
  // with the data-parallel replicas'. Megatron's order: tensor innermost, then context, then data.
  int context = 1;
  int data = 1;                    // d: replicas of the whole pipeline
  // e: GPUs a mixture-of-experts layer's routed experts are split over, each holding experts / e of
  // them whole (expert tensor parallelism 1, as Megatron's MoE recipes run it). Carved out of the
  // t x c x d GPUs that hold one stage: Megatron lays the expert groups out with expert tensor
  // parallelism innermost, so with it at 1 a group is e consecutive GPUs; tokens reach their
  // experts by an all-to-all within the group.
  int expert = 1;
  // The tokens the busiest GPU of an expert group receives over the balanced share (>= 1; 1: the
  // balanced routing of Megatron's force-balanced benchmarks). Every GPU of a stage waits for the
  // busiest: its grouped GEMMs, the all-to-all it receives and the routed activations it keeps.
  double moe_imbalance = 1;
  Sharding sharding = Sharding::none;
  Recompute recompute = Recompute::none;
  RecomputeModules recompute_modules{};  // with recompute selective

  int gpus_per_device() const { return tensor * context * data; }
  // The GPUs that hold the same weights and reduce (or shard) their gradients and optimizer state.
  int gradient_replicas() const { return context * data; }
  // The GPUs that hold the same experts and reduce (or shard) their gradients and optimizer state.
  int expert_gradient_replicas() const { return tensor * context * data / expert; }
  bool shards_optimizer() const { return sharding != Sharding::none; }
  bool shards_gradients() const { return sharding != Sharding::none && sharding != Sharding::zero1; }
  bool shards_parameters() const { return sharding == Sharding::zero3 || sharding == Sharding::fsdp; }
};

std::string_view recompute_name(Recompute recompute);
std::string_view sharding_name(Sharding sharding);

// The scenario fields tensor_parallel, sequence_parallel, tp_comm_overlap, context_parallel,
// data_parallel, expert_parallel, sharding and recompute (all optional); errors name `source`, the field and the value.
Parallelism parallelism_from_json(const nlohmann::json& scenario, std::string_view source);

}  // namespace zb::models
