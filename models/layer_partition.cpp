// Contiguous partitions of the model's pieces by dynamic programming over the cut points.
#include "models/layer_partition.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "models/detail/layer_costs.h"
#include "models/static_memory.h"

namespace zb::models {

const char* objective_name(PartitionObjective objective) {
  switch (objective) {
    case PartitionObjective::fbw: return "F+B+W";
    case PartitionObjective::fb: return "F+B";
    case PartitionObjective::f: return "F";
  }
  return "?";
}

std::vector<PartitionPiece> model_pieces(const ModelSetup& setup) {
  const auto piece = [](const PieceCosts& costs, double params) {
    return PartitionPiece{costs.t_f_ms, costs.t_b_ms, costs.t_w_ms, costs.act_b_bytes, costs.act_w_bytes, params};
  };
  std::vector<PartitionPiece> pieces;
  pieces.push_back(piece(embedding_costs(setup), embedding_params_per_gpu(setup)));
  if (setup.model.moe_dense_layers > 0) {
    const ModelSetup dense = dense_layer_setup(setup);
    pieces.insert(pieces.end(), setup.model.moe_dense_layers, piece(layer_costs(dense), layer_params_per_gpu(dense)));
  }
  const PartitionPiece layer = piece(layer_costs(setup), layer_params_per_gpu(setup));
  pieces.insert(pieces.end(), setup.model.layers - setup.model.moe_dense_layers, layer);
  pieces.push_back(piece(output_costs(setup), output_params_per_gpu(setup)));
  return pieces;
}

PartitionRequest partition_request(const ModelSetup& setup, const PipelineShape& shape,
                                   std::vector<std::vector<InFlight>> in_flight) {
  PartitionRequest request;
  request.stages = shape.stages();
  request.device_of_stage = shape.device_of_stage;
  request.in_flight = std::move(in_flight);
  // static_memory is linear in the parameters but for ZeRO-3/FSDP's two gathered layers, which
  // every device holds whatever its share.
  const double whatever_share_GB = static_memory(setup, 0, layer_params_per_gpu(setup)).total_GB();
  request.static_GB_per_param = static_memory(setup, 1, 0).total_GB();
  request.budget_GB = setup.hardware.memory_GB - setup.hardware.reserved_GB - whatever_share_GB;
  return request;
}

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Sums of pieces [i, j) from prefix sums.
class PieceSums {
 public:
  explicit PieceSums(const std::vector<PartitionPiece>& pieces) : prefix_(pieces.size() + 1) {
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      const PartitionPiece& p = pieces[i];
      PartitionPiece& next = prefix_[i + 1];
      next = prefix_[i];
      next.t_f_ms += p.t_f_ms, next.t_b_ms += p.t_b_ms, next.t_w_ms += p.t_w_ms;
      next.act_b_bytes += p.act_b_bytes, next.act_w_bytes += p.act_w_bytes, next.params += p.params;
    }
  }
  int size() const { return static_cast<int>(prefix_.size()) - 1; }
  PartitionPiece range(int i, int j) const {
    const PartitionPiece& a = prefix_[i];
    const PartitionPiece& b = prefix_[j];
    return {b.t_f_ms - a.t_f_ms, b.t_b_ms - a.t_b_ms, b.t_w_ms - a.t_w_ms, b.act_b_bytes - a.act_b_bytes,
            b.act_w_bytes - a.act_w_bytes, b.params - a.params};
  }

 private:
  std::vector<PartitionPiece> prefix_;
};

double objective_cost(const PartitionPiece& group, PartitionObjective objective) {
  switch (objective) {
    case PartitionObjective::fbw: return group.t_f_ms + group.t_b_ms + group.t_w_ms;
    case PartitionObjective::fb: return group.t_f_ms + group.t_b_ms;
    case PartitionObjective::f: return group.t_f_ms;
  }
  return 0;
}

double group_memory_GB(const PartitionPiece& group, const PartitionRequest& request, int stage) {
  double activations = 0;
  if (!request.in_flight.empty()) {
    for (const InFlight& moment : request.in_flight[stage]) {
      activations = std::max(activations, moment.forwards * group.act_b_bytes + moment.backwards * group.act_w_bytes);
    }
  }
  return request.static_GB_per_param * group.params + activations * 1e-9;
}

// The stage's share of its device's budget.
double share_GB(const PartitionRequest& request, int stage) {
  const int device = request.device_of_stage[stage];
  const auto held = std::count(request.device_of_stage.begin(), request.device_of_stage.end(), device);
  return request.budget_GB / static_cast<double>(held);
}

bool fits(const PartitionPiece& group, const PartitionRequest& request, int stage) {
  return request.in_flight.empty() || group_memory_GB(group, request, stage) <= share_GB(request, stage);
}

// The cuts that minimise the sum of `cost(stage, i, j)` (or, with `bottleneck`, its largest term)
// over groups [i, j); cost is +inf for groups not allowed. Returns the cut positions (stages + 1
// of them: 0, ..., pieces) or empty when every partition has an infinite cost. Ties keep the
// earliest cut, so the answer is deterministic.
template <typename Cost>
std::vector<int> optimal_cuts(int pieces, int stages, bool bottleneck, const Cost& cost, double* value) {
  // best[k][j]: pieces [0, j) in stages 0..k-1.
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(pieces + 1, kInfinity));
  std::vector<std::vector<int>> from(stages + 1, std::vector<int>(pieces + 1, -1));
  best[0][0] = 0;
  for (int k = 1; k <= stages; ++k) {
    // Every later stage needs a piece of its own.
    for (int j = k; j <= pieces - (stages - k); ++j) {
      for (int i = k - 1; i < j; ++i) {
        if (best[k - 1][i] == kInfinity) continue;
        const double term = cost(k - 1, i, j);
        if (term == kInfinity) continue;
        const double total = bottleneck ? std::max(best[k - 1][i], term) : best[k - 1][i] + term;
        if (total < best[k][j]) best[k][j] = total, from[k][j] = i;
      }
    }
  }
  if (best[stages][pieces] == kInfinity) return {};
  *value = best[stages][pieces];
  std::vector<int> cuts(stages + 1);
  cuts[stages] = pieces;
  for (int k = stages; k >= 1; --k) cuts[k - 1] = from[k][cuts[k]];
  return cuts;
}

std::vector<int> layers_of_cuts(const std::vector<int>& cuts, int pieces) {
  std::vector<int> layers;
  // Pieces 1 .. pieces-2 are the transformer layers.
  for (std::size_t k = 0; k + 1 < cuts.size(); ++k) {
    layers.push_back(std::max(0, std::min(cuts[k + 1], pieces - 1) - std::max(cuts[k], 1)));
  }
  return layers;
}

}  // namespace

std::optional<Partition> best_partition(const std::vector<PartitionPiece>& pieces, const PartitionRequest& request,
                                        PartitionObjective objective) {
  const PieceSums sums(pieces);
  const int n = sums.size();
  if (request.stages < 1 || request.stages > n) return std::nullopt;
  const auto allowed_cost = [&](int stage, int i, int j) {
    const PartitionPiece group = sums.range(i, j);
    return fits(group, request, stage) ? objective_cost(group, objective) : kInfinity;
  };
  double bottleneck = 0;
  if (optimal_cuts(n, request.stages, true, allowed_cost, &bottleneck).empty()) return std::nullopt;
  // Second pass: among the splits at that bottleneck, the most even (smallest sum of squares).
  const auto squared_cost = [&](int stage, int i, int j) {
    const double cost = allowed_cost(stage, i, j);
    return cost <= bottleneck ? cost * cost : kInfinity;
  };
  double squares = 0;
  const std::vector<int> cuts = optimal_cuts(n, request.stages, false, squared_cost, &squares);
  return Partition{layers_of_cuts(cuts, n), objective, bottleneck};
}

std::vector<Partition> partition_candidates(const std::vector<PartitionPiece>& pieces,
                                            const PartitionRequest& request) {
  std::vector<Partition> candidates;
  for (const PartitionObjective objective : {PartitionObjective::fbw, PartitionObjective::fb, PartitionObjective::f}) {
    const auto partition = best_partition(pieces, request, objective);
    if (partition && std::find(candidates.begin(), candidates.end(), *partition) == candidates.end()) {
      candidates.push_back(*partition);
    }
  }
  return candidates;
}

std::string no_fit_reason(const std::vector<PartitionPiece>& pieces, const PartitionRequest& request) {
  const PieceSums sums(pieces);
  const int n = sums.size();
  const int layers = n - 2;
  if (request.stages > n) {
    return fmt::format("{} layers with the embedding and the output layer cannot fill {} stages", layers,
                       request.stages);
  }
  // The split whose worst stage is least over its share.
  const auto pressure = [&](int stage, int i, int j) {
    return group_memory_GB(sums.range(i, j), request, stage) / share_GB(request, stage);
  };
  double worst = 0;
  const std::vector<int> cuts = optimal_cuts(n, request.stages, true, pressure, &worst);
  int stage = 0;
  for (int k = 0; k < request.stages; ++k) {
    if (pressure(k, cuts[k], cuts[k + 1]) == worst) stage = k;
  }
  return fmt::format("no split of {} layers into {} stages fits device memory: at best stage {} (device {}) needs "
                     "{:.1f} GB of its {:.1f} GB share",
                     layers, request.stages, stage, request.device_of_stage[stage],
                     group_memory_GB(sums.range(cuts[stage], cuts[stage + 1]), request, stage),
                     share_GB(request, stage));
}

std::vector<StageLoad> stage_loads(const std::vector<PartitionPiece>& pieces, const PartitionRequest& request,
                                   const std::vector<int>& layers) {
  const PieceSums sums(pieces);
  const int n = sums.size();
  std::vector<StageLoad> loads;
  int start = 0;
  for (int s = 0; s < static_cast<int>(layers.size()); ++s) {
    int end = start + layers[s] + (s == 0 ? 1 : 0);
    if (s + 1 == static_cast<int>(layers.size())) end = n;
    const PartitionPiece group = sums.range(start, end);
    loads.push_back({group.t_f_ms, group.t_b_ms, group.t_w_ms, group_memory_GB(group, request, s)});
    start = end;
  }
  return loads;
}

}  // namespace zb::models
