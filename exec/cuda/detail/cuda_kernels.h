// Host launchers of the executor's small CUDA kernels (everything that is not a cuBLAS GEMM).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace zb::exec::cuda::kernels {

// Every launcher only enqueues work on `stream` and returns the launch status. Reductions use a
// fixed grid and a fixed tree, so their bits never depend on the GPU, its SM count or timing.

cudaError_t add_row_vector(float* x, const float* bias, int rows, int cols, cudaStream_t stream);
cudaError_t gelu_forward(const float* u, float* z, std::size_t n, cudaStream_t stream);
cudaError_t gelu_backward(const float* u, float* g, std::size_t n, cudaStream_t stream);
cudaError_t add(float* dst, const float* src, std::size_t n, cudaStream_t stream);
// out[j] = sum over rows r, in order, of x[r * cols + j].
cudaError_t column_sums(const float* x, float* out, int rows, int cols, cudaStream_t stream);
// grad = (y - target) * scale; *loss = sum of 0.5 (y - target)^2 in double. `partials` holds
// reduction_partials() doubles of scratch.
cudaError_t mse_loss_and_grad(const float* y, const float* target, float scale, float* grad,
                              std::size_t n, double* partials, double* loss, cudaStream_t stream);
// *out = sum of x^2 in double (NaN or inf when an element is not finite).
cudaError_t sum_squares(const float* x, std::size_t n, double* partials, double* out,
                        cudaStream_t stream);
cudaError_t poison(float* x, std::size_t index, cudaStream_t stream);

// The same formulas as the CPU device (exec/cpu/cpu_device.cpp), element by element.
cudaError_t sgd_update(float* param, const float* grad, float* velocity, std::size_t n, float lr,
                       float momentum, float weight_decay, float grad_scale, cudaStream_t stream);
cudaError_t adamw_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq,
                         std::size_t n, float lr, float beta1, float beta2, float eps,
                         float weight_decay, float grad_scale, float correction1,
                         float correction2, cudaStream_t stream);

// Doubles of scratch the reductions need.
constexpr int reduction_partials() { return 256; }

}  // namespace zb::exec::cuda::kernels
