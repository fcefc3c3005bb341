// Per-stage costs from the per-layer counts, the layer split, the hardware and the links.
#include "models/cost_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "models/errors.h"
#include "models/detail/kernel_time.h"
#include "models/detail/layer_costs.h"
#include "models/layer_partition.h"
#include "models/detail/optimizer_cost.h"
#include "models/setup_infeasible.h"
#include "models/stage_split.h"

namespace zb::models {

namespace {

// Stages one model copy is split over: every stage, or half of them for two copies (DualPipe).
int path_stages(const PipelineShape& shape) { return shape.stages() / shape.parameter_copies; }

// The split's layers per stage; a balanced split without a schedule to judge it is the dynamic
// program's smallest bottleneck F+B+W (no memory check: the schedule decides what is held).
std::vector<int> layers_per_stage(const ModelSetup& setup, const PipelineShape& shape, std::string_view source) {
  std::vector<int> path_layers;
  if (setup.split.kind != Split::Kind::balanced) {
    path_layers = split_layers(setup.model.layers, path_stages(shape), setup.split, source);
  } else {
    if (shape.parameter_copies > 1) {
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

// Parameter sharding (ZeRO-3, FSDP) with one stage per data-parallel replica: every microbatch
// gathers each piece's 16-bit parameters over the data-parallel group before its F and again before
// its B (FSDP's reshard after forward, ZeRO-3's release), and reduce-scatters its gradients after
// W; each transfer is prefetched while the piece before it computes, so a pass takes the longer
// of its compute and its transfer. With a pipeline the frameworks keep the gathered parameters
// for the whole step (torchtitan) or refuse ZeRO-3 (DeepSpeed): the step's one gather and
// reduce-scatter move the bytes dp_reduce_times_ms charges.
bool gathers_per_microbatch(const ModelSetup& setup, const PipelineShape& shape) {
  return setup.parallel.shards_parameters() && setup.parallel.gradient_replicas() > 1 && shape.devices == 1;
}

PieceCosts with_parameter_gathers(PieceCosts piece, double params_per_gpu, const ModelSetup& setup, const Link& link) {
  const double moved_ms =
      reduce_scatter_ms(setup.hardware, link, setup.parallel.gradient_replicas(), params_per_gpu * kGradientBytesPerParam);
  piece.t_f_ms = std::max(piece.t_f_ms, moved_ms);
  piece.t_b_ms = std::max(piece.t_b_ms, moved_ms);
  piece.t_w_ms = std::max(piece.t_w_ms, moved_ms);
  return piece;
}

}  // namespace

StageCosts stage_costs(const ModelSetup& setup, const PipelineShape& shape, std::string_view source) {
  const int stages = shape.stages();
  setup.interconnect.check_devices(shape.devices, source);
  StageCosts costs;
  // Each model copy (two under bidirectional: DualPipe) is split over its own stages, the
  // embedding on the first of its path and the output layer on the last (docs/design.md section 3).
  const int copy_stages = path_stages(shape);
  costs.layers = layers_per_stage(setup, shape, source);
  PieceCosts layer = layer_costs(setup);
  // A MoE model's first moe_dense_layers layers have a dense MLP instead of experts (costed only
  // when there are some: stage_costs runs for every candidate a plan search tries).
  const bool leading_dense = setup.model.moe_dense_layers > 0;
  const ModelSetup dense_setup = leading_dense ? dense_layer_setup(setup) : ModelSetup{};
  PieceCosts dense_layer = leading_dense ? layer_costs(dense_setup) : PieceCosts{};
  PieceCosts embedding = embedding_costs(setup);
  PieceCosts output = output_costs(setup);
  const double layer_params = layer_params_per_gpu(setup);
  const double dense_layer_params = leading_dense ? layer_params_per_gpu(dense_setup) : 0.0;
  const double layer_expert_params = layer_expert_params_per_gpu(setup);
  if (gathers_per_microbatch(setup, shape)) {
    const Link& link = data_parallel_link(setup.interconnect, 0, setup.parallel.gradient_replicas());
    layer = with_parameter_gathers(layer, layer_params, setup, link);
    if (leading_dense) dense_layer = with_parameter_gathers(dense_layer, dense_layer_params, setup, link);
    embedding = with_parameter_gathers(embedding, embedding_params_per_gpu(setup), setup, link);
    output = with_parameter_gathers(output, output_params_per_gpu(setup), setup, link);
  }
  std::vector<double> params(shape.devices, 0.0), expert_params(shape.devices, 0.0);
  int first_layer = 0;  // of the stage, along its copy's path
  for (int s = 0; s < stages; ++s) {
    PieceCosts stage;
    if (s % copy_stages == 0) first_layer = 0;
    const int layers = costs.layers[s];
    const double dense = std::clamp(setup.model.moe_dense_layers - first_layer, 0, layers);
    const double n = layers - dense;  // MoE layers, or every layer of a dense model
    first_layer += layers;
    stage.t_f_ms = n * layer.t_f_ms + dense * dense_layer.t_f_ms;
    stage.t_b_ms = n * layer.t_b_ms + dense * dense_layer.t_b_ms;
    stage.t_w_ms = n * layer.t_w_ms + dense * dense_layer.t_w_ms;
    stage.act_b_bytes = n * layer.act_b_bytes + dense * dense_layer.act_b_bytes;
    stage.act_w_bytes = n * layer.act_w_bytes + dense * dense_layer.act_w_bytes;
    double stage_params = n * layer_params + dense * dense_layer_params;
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
    costs.t_a2a_ms.push_back(n * layer.t_a2a_ms);
    costs.mem_f_GB.push_back(stage.act_b_bytes * 1e-9);
    costs.mem_b_GB.push_back((stage.act_w_bytes - stage.act_b_bytes) * 1e-9);
    costs.mem_w_GB.push_back(-stage.act_w_bytes * 1e-9);
    if (setup.hardware.host_link.bandwidth_GBps > 0) costs.t_offload_ms.push_back(setup.hardware.host_copy_ms(stage.act_b_bytes));
    params[shape.device_of_stage[s]] += stage_params;
    expert_params[shape.device_of_stage[s]] += n * layer_expert_params;
    costs.params.push_back(stage_params);
  }
  for (int device = 0; device < shape.devices; ++device) {
    costs.static_memory.push_back(static_memory(setup, params[device], layer_params, expert_params[device]));
    costs.static_GB.push_back(costs.static_memory.back().total_GB());
  }
  // 16-bit b x s x h, of which each GPU of a tensor-parallel group sends its 1/t (Megatron's
  // scatter-gather of pipeline transfers) over its own link.
  costs.bytes_act = 2.0 * setup.microbatch_size * setup.model.seq_len * setup.model.hidden / setup.parallel.tensor;
  for (int s = 0; s < stages; ++s) {
    const int from = shape.device_of_stage[s];
    const int to = shape.device_of_stage[(s + 1) % stages];
    costs.t_comm_ms.push_back(from == to ? 0.0 : setup.interconnect.link_between(from, to).transfer_ms(costs.bytes_act));
  }
  for (const auto& [from, to] : shape.all_reduce_hops) {
    costs.reduce_hop_ms =
        std::max(costs.reduce_hop_ms, setup.interconnect.link_between(from, to).transfer_ms(shape.all_reduce_hop_bytes));
  }
  return costs;
}

std::string describe_setup(const ModelSetup& setup) {
  const Parallelism& parallel = setup.parallel;
  return fmt::format("tensor_parallel {}{}, {}data_parallel {}, sharding {}, recompute {}, {:g} bytes per parameter",
                     parallel.tensor, parallel.sequence_parallel ? " (sequence parallel)" : "",
                     parallel.context > 1 ? fmt::format("context_parallel {}, ", parallel.context) : "", parallel.data,
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
std::vector<double> dp_reduce_times_ms(const ModelSetup& setup, const PipelineShape& shape, const StageCosts& costs) {
  const int replicas = setup.parallel.gradient_replicas();
  if (replicas <= 1 || gathers_per_microbatch(setup, shape)) return {};
  std::vector<double> times;
  for (int s = 0; s < shape.stages(); ++s) {
    const Link& link = data_parallel_link(setup.interconnect, shape.device_of_stage[s], replicas);
    times.push_back(all_reduce_ms(setup.hardware, link, replicas, costs.params[s] * kGradientBytesPerParam));
  }
  return times;
}

}  // namespace zb::models
