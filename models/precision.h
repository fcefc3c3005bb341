// The number format of a run's matrix multiplications: 16-bit (bf16 or fp16: the same tensor-core
// rate and bytes), or FP8 as NVIDIA's Transformer Engine runs it.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string_view>

namespace zb::models {

// fp8: the linear layers' GEMMs (forward, input gradient and weight gradient) take FP8 operands at
// the GPU's FP8 rate; each operand is cast from 16-bit first (with its transpose, for the other
// pass), scaled by an amax from earlier steps (delayed scaling). fp8_current: the same, each
// tensor's amax taken from the tensor itself first (one more read of it). fp8_rowwise: torchao's
// row-wise ("axiswise") scaling: the casts of current scaling (an amax per row, then the FP8 copy
// and its other-axis copy), and GEMMs with per-row scales at the 16-bit tensor-core rate. That
// rate is the development set's, not a datasheet's: torchtitan's row-wise runs measured at or
// below their BF16 twins (tests/data/measured/dev.csv T26/T27 against T22/T23, T32/T33 against
// T28/T29: the row-wise scaled GEMM of that torch, a CUTLASS kernel, gained nothing over BF16),
// while tensor-wise FP8 gained 21-36% there (T24/T25, T30/T31). Attention, the output layer and
// everything memory-bound stay 16-bit; master weights, gradients and optimizer state are
// unchanged (models/static_memory.h).
enum class Precision { bf16, fp8, fp8_current, fp8_rowwise };

std::string_view precision_name(Precision precision);

// The scenario field "precision": "bf16" (the default), "fp16" (costed as bf16), "fp8", "fp8-cs"
// (current scaling) or "fp8-rowwise"; errors name `source`.
Precision precision_from_json(const nlohmann::json& scenario, std::string_view source);

}  // namespace zb::models
