// The cost model: a model setup and a pipeline shape to per-stage times, bytes and memory.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "models/model_setup.h"
#include "models/static_memory.h"
#include "models/pipeline_shape.h"

namespace zb::models {

// Per-stage costs in milliseconds and GB (1e9 bytes), indexed by stage (p * v of them).
struct StageCosts {
  std::vector<int> layers;
  std::vector<double> t_f_ms, t_b_ms, t_w_ms;  // each pass alone
  std::vector<double> t_a2a_ms;  // of t_f_ms and of t_b_ms: the MoE all-to-all an overlapped pair may hide
  std::vector<double> t_comm_ms;  // boundary s -> s+1 (the last: back to stage 0's device)
  std::vector<double> mem_f_GB, mem_b_GB, mem_w_GB;
  // Per stage: one way over the host link, what a forward leaves (mem_f), for activation offload;
  // empty when the hardware describes no host link.
  std::vector<double> t_offload_ms;
  std::vector<double> static_GB;  // per device: parameters, gradients and optimizer state (GB per GPU)
  std::vector<StaticMemory> static_memory;  // the same, part by part
  std::vector<double> params;  // per stage: parameters per GPU (the data-parallel gradient all-reduce)
  double bytes_act = 0;           // activation (and gradient) bytes crossing a stage boundary
  double reduce_hop_ms = 0;       // the slowest message of the gradient-norm all-reduce (PipelineShape::all_reduce_hops)
};

// Times are each piece's kernels (layer_costs.h; flops / (peak bf16 flop/s * mfu) with `mfu`),
// memory per GPU of a pipeline device. `shape` gives p, v and the placement. Throws
// SetupInfeasible when the shape cannot hold the model (more stages than layers, too few GPUs).
StageCosts stage_costs(const ModelSetup& setup, const PipelineShape& shape, std::string_view source);

// "tensor_parallel 8 (sequence parallel), data_parallel 1, sharding none, recompute full, 16 bytes per parameter"
std::string describe_setup(const ModelSetup& setup);

// The activation memory limit from device memory ("auto"): the smallest, over devices, of
// memory - reserved - static memory. Throws SetupInfeasible naming the device, its static memory
// part by part and the setup's knobs when the parameters, gradients and optimizer state alone do
// not fit.
double auto_memory_limit_GB(const ModelSetup& setup, const StageCosts& costs, std::string_view source);

// t_opt per device: the optimizer's update of its parameters, bound by memory bandwidth.
std::vector<double> optimizer_times_ms(const ModelSetup& setup, const StageCosts& costs);

// t_dp_reduce per stage: the ring all-reduce of its bf16 gradients (per GPU: after tensor
// parallelism) over the data-parallel replicas; empty without data parallelism, and with parameter
// sharding on one stage, whose gradients are reduce-scattered layer by layer in W (stage_costs).
std::vector<double> dp_reduce_times_ms(const ModelSetup& setup, const PipelineShape& shape, const StageCosts& costs);

}  // namespace zb::models
