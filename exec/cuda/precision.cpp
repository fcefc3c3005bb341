// GEMM precision of the CUDA backend: fp32, or bf16 inputs with fp32 accumulation.
#include "exec/cuda/detail/precision.h"

#include <fmt/format.h>

#include "sim/support/error.h"

namespace zb::exec::cuda {

Precision parse_precision(std::string_view text) {
  if (text == "fp32") return Precision::fp32;
  if (text == "bf16") return Precision::bf16;
  throw InputError(fmt::format("--precision '{}': expected fp32 or bf16", text));
}

std::string_view precision_name(Precision precision) {
  return precision == Precision::fp32 ? "fp32" : "bf16";
}

}  // namespace zb::exec::cuda
