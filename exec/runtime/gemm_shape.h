// The shape of c = op(a) * op(b), checked once for every backend's gemm.
#pragma once

#include <fmt/format.h>

#include "exec/runtime/exec_error.h"
#include "exec/runtime/tensor.h"

namespace zb::exec {

struct GemmShape {
  int m = 0;  // rows of op(a) and c
  int n = 0;  // columns of op(b) and c
  int k = 0;  // the summed dimension
};

// Throws ExecError naming the three shapes when they do not fit.
inline GemmShape checked_gemm_shape(bool transpose_a, bool transpose_b, const Tensor& a, const Tensor& b,
                                    const Tensor& c) {
  const GemmShape shape{transpose_a ? a.cols() : a.rows(), transpose_b ? b.rows() : b.cols(),
                        transpose_a ? a.rows() : a.cols()};
  const int k_b = transpose_b ? b.cols() : b.rows();
  if (shape.k != k_b || c.rows() != shape.m || c.cols() != shape.n) {
    throw ExecError(fmt::format("gemm: shapes {}x{}{} * {}x{}{} -> {}x{} do not fit", a.rows(), a.cols(),
                                transpose_a ? "^T" : "", b.rows(), b.cols(), transpose_b ? "^T" : "", c.rows(),
                                c.cols()));
  }
  return shape;
}

}  // namespace zb::exec
