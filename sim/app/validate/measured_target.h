// What a measured row measured, as tokens per second per GPU, and whether it counts in the
// statistics (a re-print of another row, a known-bad run and a row whose numbers look swapped are
// still printed, but counted once or not at all).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "sim/app/validate/measured_csv.h"
#include "sim/app/validate/row_model.h"

namespace zb::validate {

struct MeasuredTarget {
  std::optional<double> tokens_per_s_per_gpu;
  std::string how;       // which column it came from, or the FLOP formula that converted TFLOP/s
  std::string missing;   // why there is no target ("" when there is one)
  std::string excluded;  // why the row is left out of the statistics ("" when it counts)
};

// In this order: the tokens/s/GPU column; gbs x seq_len / (step time x gpus); the TFLOP/s per GPU
// divided by the FLOPs per token of the source's own formula (FLOP formulas are known for the
// sources of tests/data/measured/; another source's TFLOP/s-only row has no target).
MeasuredTarget measured_target(const MeasuredRow& row, const RowModel& model, std::string_view file);

// FLOPs per token as each source counted them (L layers, h hidden, s sequence, V vocabulary):
// SC21 Eq. 3 and BLOOM's "4*2 coefficient", hardware FLOPs with the recompute forward:
//   96 L h^2 (1 + s/6h + V/16Lh)
double flops_per_token_sc21(const RowModel& model);
// Megatron-LM's num_floating_point_operations (model FLOPs, grouped-query attention, gated MLP):
//   12 L h^2 ((1 + g/a + s/h) + (f/h) (3/2 if gated) + V/(2Lh))
double flops_per_token_megatron(const RowModel& model);
// NeMo 24.x: 6 N + 6 h V + 12 L h s, N the GEMM parameters of the layers.
double flops_per_token_nemo(const RowModel& model);

}  // namespace zb::validate
