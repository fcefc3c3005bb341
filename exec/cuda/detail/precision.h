// GEMM precision of the CUDA backend: fp32, or bf16 inputs with fp32 accumulation.
#pragma once

#include <string_view>

namespace zb::exec::cuda {

// fp32: plain single precision (no TF32). bf16: cuBLAS rounds the fp32 operands to bf16 and
// accumulates in fp32 (CUBLAS_COMPUTE_32F_FAST_16BF); tensors stay fp32 in memory.
enum class Precision { fp32, bf16 };

Precision parse_precision(std::string_view text);  // throws InputError naming --precision
std::string_view precision_name(Precision precision);

}  // namespace zb::exec::cuda
