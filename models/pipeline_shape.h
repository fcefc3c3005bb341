// The pipeline a model is costed on, as plain numbers: sim/app makes one from a Problem
// (sim/app/catalog/model_costs.h), so the cost model needs nothing of the simulator.
#pragma once

#include <utility>
#include <vector>

namespace zb::models {

struct PipelineShape {
  int devices = 1;                   // pipeline devices (p)
  int microbatches = 1;              // per step (m)
  std::vector<int> device_of_stage;  // one per stage (p x chunks), in model order
  int parameter_copies = 1;          // model copies along the stages: 2 under the bidirectional placement (DualPipe)
  // The messages of the gradient-norm all-reduce, (from, to) devices: the simulator's rule
  // (sim/core/optimizer_step.h), which the cost model times on the links.
  std::vector<std::pair<int, int>> all_reduce_hops;
  double all_reduce_hop_bytes = 0;  // the bytes of each such message

  int stages() const { return static_cast<int>(device_of_stage.size()); }
};

}  // namespace zb::models
