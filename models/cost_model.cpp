// Per-stage costs from the per-layer counts, the layer split, the hardware and the links.
#include "models/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "sim/support/error.h"
#include "models/layer_costs.h"
#include "models/layer_partition.h"
#include "models/optimizer_cost.h"
#include "models/setup_error.h"
#include "models/stage_split.h"
#include "sim/core/optimizer_step.h"

namespace zb::models {

namespace {

// Stages one model copy is split over: every stage, or half of them for two copies (DualPipe).
int path_stages(const Problem& shape) { return shape.stages() / shape.parameter_copies(); }

// The split's layers per stage; a balanced split without a schedule to judge it is the dynamic
// program's smallest bottleneck F+B+W (no memory check: the schedule decides what is held).
std::vector<int> layers_per_stage(const ModelSetup& setup, const Problem& shape, std::string_view source) {
  std::vector<int> path_layers;
  if (setup.split.kind != Split::Kind::balanced) {
    path_layers = split_layers(setup.model.layers, path_stages(shape), setup.split, source);
  } else {
    if (shape.parameter_copies() > 1) {
      throw SetupInfeasible(fmt::format("{}: split 'balanced' is not searched for the bidirectional placement (two "
                                        "model copies); use \"even\" or \"paper\"",
                                        source));
    }
    const std::vector<PartitionPiece> pieces = model_pieces(setup);
    const PartitionRequest request = partition_request(setup, shape, {});
    const auto partition = best_partition(pieces, request, PartitionObjective::fbw);
    if (!partition) throw SetupInfeasible(fmt::format("{}: {}", source, no_fit_reason(pieces, request)));
    path_layers = partition->layers;
  }
  std::vector<int> layers;
  for (int s = 0; s < shape.stages(); ++s) layers.push_back(path_layers[s % path_stages(shape)]);
  return layers;
}

}  // namespace

StageCosts stage_costs(const ModelSetup& setup, const Problem& shape, std::string_view source) {
  const int stages = shape.stages();
  setup.interconnect.check_devices(shape.devices, source);
  StageCosts costs;
  // Each model copy (two under bidirectional: DualPipe) is split over its own stages, the
  // embedding on the first of its path and the output layer on the last (docs/design.md section 3).
  const int copy_stages = path_stages(shape);
  costs.layers = layers_per_stage(setup, shape, source);
  const PieceCosts layer = layer_costs(setup);
  const PieceCosts embedding = embedding_costs(setup);
  const PieceCosts output = output_costs(setup);
  const double layer_params = layer_params_per_gpu(setup);
  std::vector<double> params(shape.devices, 0.0);
  for (int s = 0; s < stages; ++s) {
    PieceCosts stage;
    const double n = costs.layers[s];
    stage.t_f_ms = n * layer.t_f_ms;
    stage.t_b_ms = n * layer.t_b_ms;
    stage.t_w_ms = n * layer.t_w_ms;
    stage.act_b_bytes = n * layer.act_b_bytes;
    stage.act_w_bytes = n * layer.act_w_bytes;
    double stage_params = n * layer_params;
    for (const auto& [present, piece, piece_params] :
         {std::tuple{s % copy_stages == 0, &embedding, embedding_params_per_gpu(setup)},
          std::tuple{s % copy_stages == copy_stages - 1, &output, output_params_per_gpu(setup)}}) {
      if (!present) continue;
      stage.t_f_ms += piece->t_f_ms;
      stage.t_b_ms += piece->t_b_ms;
      stage.t_w_ms += piece->t_w_ms;
      stage.act_b_bytes += piece->act_b_bytes;
      stage.act_w_bytes += piece->act_w_bytes;
      stage_params += piece_params;
    }
    costs.t_f_ms.push_back(stage.t_f_ms);
    costs.t_b_ms.push_back(stage.t_b_ms);
    costs.t_w_ms.push_back(stage.t_w_ms);
    costs.mem_f_GB.push_back(stage.act_b_bytes * 1e-9);
    costs.mem_b_GB.push_back((stage.act_w_bytes - stage.act_b_bytes) * 1e-9);
    costs.mem_w_GB.push_back(-stage.act_w_bytes * 1e-9);
    params[shape.device_of_stage(s)] += stage_params;
    costs.params.push_back(stage_params);
  }
  for (const double device_params : params) {
    costs.static_memory.push_back(static_memory(setup, device_params, layer_params));
    costs.static_GB.push_back(costs.static_memory.back().total_GB());
  }
  // 16-bit b x s x h, of which each GPU of a tensor-parallel group sends its 1/t (Megatron's
  // scatter-gather of pipeline transfers) over its own link.
  costs.bytes_act = 2.0 * setup.microbatch_size * setup.model.seq_len * setup.model.hidden / setup.parallel.tensor;
  for (int s = 0; s < stages; ++s) {
    const int from = shape.device_of_stage(s);
    const int to = shape.device_of_stage((s + 1) % stages);
    costs.t_comm_ms.push_back(from == to ? 0.0 : setup.interconnect.link_between(from, to).transfer_ms(costs.bytes_act));
  }
  for (const auto& [from, to] : all_reduce_hops(shape)) {
    costs.reduce_hop_ms =
        std::max(costs.reduce_hop_ms, setup.interconnect.link_between(from, to).transfer_ms(kGradNormBytes));
  }
  return costs;
}

std::string describe_setup(const ModelSetup& setup) {
  const Parallelism& parallel = setup.parallel;
  return fmt::format("tensor_parallel {}{}, data_parallel {}, sharding {}, recompute {}, {:g} bytes per parameter",
                     parallel.tensor, parallel.sequence_parallel ? " (sequence parallel)" : "", parallel.data,
                     sharding_name(parallel.sharding), recompute_name(parallel.recompute), setup.bytes_per_param);
}

double auto_memory_limit_GB(const ModelSetup& setup, const StageCosts& costs, std::string_view source) {
  double limit = std::numeric_limits<double>::infinity();
  for (std::size_t d = 0; d < costs.static_GB.size(); ++d) {
    const double free_GB = setup.hardware.memory_GB - setup.hardware.reserved_GB - costs.static_GB[d];
    if (free_GB <= 0) {
      throw SetupInfeasible(fmt::format(
          "{}: device {} needs {:.1f} GB per GPU for parameters, gradients and optimizer state before any "
          "activation ({}), with {}, but {} has {:g} GB ({:g} GB reserved); more pipeline stages, tensor_parallel, or "
          "data_parallel with a sharding would split it",
          source, d, costs.static_GB[d], costs.static_memory[d].describe(), describe_setup(setup), setup.hardware_label,
          setup.hardware.memory_GB, setup.hardware.reserved_GB));
    }
    limit = std::min(limit, free_GB);
  }
  return limit;
}

namespace {

// Per stage -> per device (v = 1) -> scalar when all equal.
std::vector<double> compact(const std::vector<double>& per_stage, int chunks) {
  if (chunks == 1 && std::all_of(per_stage.begin(), per_stage.end(),
                                 [&](double value) { return value == per_stage.front(); })) {
    return {per_stage.front()};
  }
  return per_stage;
}

// t_opt per device: its update at memory bandwidth (optimizer_cost.h); empty when the hardware has
// no bandwidth.
std::vector<double> optimizer_times_ms(const ModelSetup& setup, const StageCosts& costs) {
  if (setup.hardware.memory_bandwidth_GBps <= 0) return {};
  std::vector<double> times;
  for (const double state_GB : costs.static_GB) times.push_back(optimizer_update_ms(state_GB, setup.hardware));
  return times;
}

// t_dp_reduce per stage: the ring all-reduce of its bf16 gradients (per GPU: after tensor
// parallelism) over the data-parallel replicas; empty without data parallelism. ZeRO-1/2 move the
// same bytes (a reduce-scatter of the gradients, then an all-gather of the updated parameters).
std::vector<double> dp_reduce_times_ms(const ModelSetup& setup, const Problem& shape, const StageCosts& costs) {
  const int replicas = setup.parallel.data;
  if (replicas <= 1) return {};
  std::vector<double> times;
  for (int s = 0; s < shape.stages(); ++s) {
    const Link& link = data_parallel_link(setup.interconnect, shape.device_of_stage(s), replicas);
    times.push_back(ring_all_reduce_ms(costs.params[s] * kGradientBytesPerParam, replicas, link));
  }
  return times;
}

}  // namespace

StageCosts apply_model(const ModelSetup& setup, ProblemSpec& spec, const std::set<std::string>& explicit_fields,
                 std::string_view source) {
  if (spec.devices < 1) throw InputError(fmt::format("{}: field 'p' is {}: need at least 1 device", source, spec.devices));
  if (spec.chunks < 1) throw InputError(fmt::format("{}: field 'chunks' is {}: need at least 1", source, spec.chunks));
  Problem shape;
  shape.devices = spec.devices;
  shape.chunks = spec.chunks;
  shape.placement = spec.resolved_placement();
  check_placement_chunks(shape.placement, shape.chunks, source);  // stage_costs maps stages to devices
  const StageCosts costs = stage_costs(setup, shape, source);
  // t_comm is per stage boundary, so it stays per stage unless uniform.
  const auto set = [&](const char* field, std::vector<double>& target, const std::vector<double>& values) {
    if (!explicit_fields.contains(field)) target = compact(values, spec.chunks);
  };
  set("t_f", spec.t_f, costs.t_f_ms);
  set("t_b", spec.t_b, costs.t_b_ms);
  set("t_w", spec.t_w, costs.t_w_ms);
  if (!explicit_fields.contains("t_comm")) {
    const bool uniform = std::all_of(costs.t_comm_ms.begin(), costs.t_comm_ms.end(),
                                     [&](double value) { return value == costs.t_comm_ms.front(); });
    spec.t_comm = uniform ? std::vector<double>{costs.t_comm_ms.front()} : costs.t_comm_ms;
  }
  set("mem_f", spec.mem_f, costs.mem_f_GB);
  set("mem_b", spec.mem_b, costs.mem_b_GB);
  set("mem_w", spec.mem_w, costs.mem_w_GB);
  if (!explicit_fields.contains("bytes_act")) spec.bytes_act = costs.bytes_act;
  if (!explicit_fields.contains("t_reduce_hop")) spec.t_reduce_hop = costs.reduce_hop_ms;
  if (!explicit_fields.contains("t_opt")) spec.t_opt = optimizer_times_ms(setup, costs);
  if (!explicit_fields.contains("t_dp_reduce")) spec.t_dp_reduce = dp_reduce_times_ms(setup, shape, costs);
  if (!explicit_fields.contains("time_unit")) spec.time_unit = TimeUnit::ms;
  if (!explicit_fields.contains("mem_limit")) {
    spec.mem_limit = MemoryLimit{auto_memory_limit_GB(setup, costs, source), false};
  }
  return costs;
}

}  // namespace zb::models
