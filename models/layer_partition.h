// Layer partitioning: the model's pieces (embedding, transformer layers, output layer) cut into
// contiguous pipeline stages, by dynamic programming over the cut points, under device memory.
// The result is a few candidate splits; which one a schedule runs fastest is for the evaluator
// to judge (sim/app/catalog/balanced_split.h).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "models/model_setup.h"
#include "models/pipeline_shape.h"

namespace zb::models {

// One piece of the model on one GPU of a pipeline device, in model order.
struct PartitionPiece {
  double t_f_ms = 0, t_b_ms = 0, t_w_ms = 0;
  double act_b_bytes = 0;  // kept from F until B (M_B)
  double act_w_bytes = 0;  // kept from B until W (M_W)
  double params = 0;       // parameters per GPU
};

// The embedding, then model.layers transformer layers, then the output layer (layer_costs.h).
std::vector<PartitionPiece> model_pieces(const ModelSetup& setup);

// A moment on a stage's device: the microbatches of that stage whose F has run but not their B
// (or BW), and whose B has run but not their W. Its activations then are
// forwards * M_B + backwards * M_W. A schedule's order fixes them whatever the split
// (sim/app/catalog/detail/in_flight.h reads them off a schedule).
struct InFlight {
  int forwards = 0;
  int backwards = 0;
  friend bool operator==(const InFlight&, const InFlight&) = default;
};

// What a stage's cost is measured by: its F+B+W (the steady state of a zero-bubble schedule, the
// default), its F+B (1F1B-like schedules, where W only fills bubbles), or its F.
enum class PartitionObjective { fbw, fb, f };
const char* objective_name(PartitionObjective objective);  // "F+B+W", "F+B", "F"

struct PartitionRequest {
  int stages = 1;                    // p * v
  std::vector<int> device_of_stage;  // one per stage (PipelineShape::device_of_stage)
  // Memory, checked per stage when in_flight is not empty: a stage's static memory
  // (static_GB_per_param x its parameters) plus its activation peak over in_flight[stage] must
  // fit its share of the device's budget, budget_GB split evenly over the stages the device holds
  // (exact with one stage per device; with more, a sufficient condition the evaluator refines).
  std::vector<std::vector<InFlight>> in_flight;
  double budget_GB = 0;           // device memory - reserved - what a device holds whatever its share
  double static_GB_per_param = 0;  // parameters, gradients and optimizer state per parameter
};

// The request for `setup` on `shape` (p, v, placement), with the in-flight moments of a schedule
// (empty: no memory check).
PartitionRequest partition_request(const ModelSetup& setup, const PipelineShape& shape,
                                   std::vector<std::vector<InFlight>> in_flight);

// A split: transformer layers per stage (the embedding on stage 0, the output layer on the last),
// the objective that found it and the bottleneck it reached: the largest stage cost in ms under it.
struct Partition {
  std::vector<int> layers;
  PartitionObjective objective = PartitionObjective::fbw;
  double bottleneck_ms = 0;
  friend bool operator==(const Partition& a, const Partition& b) { return a.layers == b.layers; }
};

// The split that minimises the bottleneck stage under `objective` among those whose every stage
// fits its memory share and holds at least one piece (middle stages at least one layer); among
// equal bottlenecks the one with the smallest sum of squared stage costs, then the earliest cuts.
// nullopt when none fits.
std::optional<Partition> best_partition(const std::vector<PartitionPiece>& pieces, const PartitionRequest& request,
                                        PartitionObjective objective);

// best_partition for every objective, without repeats (fbw, fb, f; a split found twice keeps the
// first objective). Empty when no split fits.
std::vector<Partition> partition_candidates(const std::vector<PartitionPiece>& pieces,
                                            const PartitionRequest& request);

// Why no split fits: the smallest largest-stage memory any split reaches against its share
// ("no split of 80 layers into 8 stages fits: at best stage 7 needs 91.2 GB of its 72.0 GB"), or
// that there are more stages than pieces.
std::string no_fit_reason(const std::vector<PartitionPiece>& pieces, const PartitionRequest& request);

// Per stage of `layers`: its F, B, W and memory estimate (static + activation peak, GB; the
// activation part is 0 without in_flight).
struct StageLoad {
  double t_f_ms = 0, t_b_ms = 0, t_w_ms = 0;
  double memory_GB = 0;
};
std::vector<StageLoad> stage_loads(const std::vector<PartitionPiece>& pieces, const PartitionRequest& request,
                                   const std::vector<int>& layers);

}  // namespace zb::models
