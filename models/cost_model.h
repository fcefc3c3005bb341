// The cost model: a model setup and a pipeline shape to per-stage times, bytes and memory.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "models/model_setup.h"
#include "models/static_memory.h"
#include "sim/core/problem.h"
#include "sim/core/problem_spec.h"

namespace zb::models {

// Per-stage costs in milliseconds and GB (1e9 bytes), indexed by stage (p * v of them).
struct StageCosts {
  std::vector<int> layers;
  std::vector<double> t_f_ms, t_b_ms, t_w_ms;
  std::vector<double> t_comm_ms;  // boundary s -> s+1 (the last: back to stage 0's device)
  std::vector<double> mem_f_GB, mem_b_GB, mem_w_GB;
  std::vector<double> static_GB;  // per device: parameters, gradients and optimizer state (GB per GPU)
  std::vector<StaticMemory> static_memory;  // the same, part by part
  std::vector<double> params;  // per stage: parameters per GPU (the data-parallel gradient all-reduce)
  double bytes_act = 0;           // activation (and gradient) bytes crossing a stage boundary
  double reduce_hop_ms = 0;       // the slowest message of the gradient-norm all-reduce (optimizer_step.h)
};

// Times are each piece's kernels (layer_costs.h; flops / (peak bf16 flop/s * mfu) with `mfu`),
// memory per GPU of a pipeline device. `shape` gives p, v and the placement. Throws
// SetupInfeasible when the shape cannot hold the model (more stages than layers, too few GPUs).
StageCosts stage_costs(const ModelSetup& setup, const Problem& shape, std::string_view source);

// "tensor_parallel 8 (sequence parallel), data_parallel 1, sharding none, recompute full, 16 bytes per parameter"
std::string describe_setup(const ModelSetup& setup);

// The activation memory limit from device memory ("auto"): the smallest, over devices, of
// memory - reserved - static memory. Throws SetupInfeasible naming the device, its static memory
// part by part and the setup's knobs when the parameters, gradients and optimizer state alone do
// not fit.
double auto_memory_limit_GB(const ModelSetup& setup, const StageCosts& costs, std::string_view source);

// Fills the cost fields of `spec` (t_f, t_b, t_w, t_comm, mem_f, mem_b, mem_w, bytes_act,
// t_reduce_hop, time_unit = ms, and mem_limit = auto) for its p, chunks and placement, except the fields named
// in `explicit_fields`, which the user gave and which win. With one chunk per device the arrays
// are per device, and a scalar where all devices are equal. Returns the stage costs it used.
StageCosts apply_model(const ModelSetup& setup, ProblemSpec& spec, const std::set<std::string>& explicit_fields,
                 std::string_view source);

}  // namespace zb::models
