// The executor's small CUDA kernels: bias, GELU, adds, column sums, losses, norms, optimizers.
#include "exec/cuda/detail/cuda_kernels.h"

#include <cmath>

namespace zb::exec::cuda::kernels {

namespace {

constexpr int kThreads = 256;
constexpr int kReduceBlocks = reduction_partials();  // fixed: the reduction tree never changes
constexpr float kGeluC = 0.7978845608028654f;        // sqrt(2 / pi)
constexpr float kGeluK = 0.044715f;

unsigned int blocks_for(std::size_t n) {
  const std::size_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned int>(blocks < 65535u * 16u ? (blocks == 0 ? 1 : blocks) : 65535u * 16u);
}

__device__ float gelu(float u) {
  const float t = tanhf(kGeluC * (u + kGeluK * u * u * u));
  return 0.5f * u * (1.0f + t);
}

__device__ float gelu_derivative(float u) {
  const float t = tanhf(kGeluC * (u + kGeluK * u * u * u));
  return 0.5f * (1.0f + t) + 0.5f * u * (1.0f - t * t) * kGeluC * (1.0f + 3.0f * kGeluK * u * u);
}

__global__ void add_row_vector_kernel(float* x, const float* bias, int rows, int cols) {
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    x[i] += bias[i % static_cast<std::size_t>(cols)];
  }
}

__global__ void gelu_forward_kernel(const float* u, float* z, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    z[i] = gelu(u[i]);
  }
}

__global__ void gelu_backward_kernel(const float* u, float* g, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    g[i] *= gelu_derivative(u[i]);
  }
}

__global__ void add_kernel(float* dst, const float* src, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    dst[i] += src[i];
  }
}

__global__ void column_sums_kernel(const float* x, float* out, int rows, int cols) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= cols) return;
  float total = 0.0f;
  for (int r = 0; r < rows; ++r) total += x[static_cast<std::size_t>(r) * cols + j];
  out[j] = total;
}

// Block-level fixed-tree sum of one double per thread; thread 0 gets the result.
__device__ double block_sum(double value) {
  __shared__ double shared[kThreads];
  shared[threadIdx.x] = value;
  __syncthreads();
  for (int stride = kThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
    __syncthreads();
  }
  return shared[0];
}

__global__ void mse_partials_kernel(const float* y, const float* target, float scale, float* grad,
                                    std::size_t n, double* partials) {
  double total = 0.0;
  const std::size_t stride = static_cast<std::size_t>(kReduceBlocks) * kThreads;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x; i < n; i += stride) {
    const float diff = y[i] - target[i];
    total += 0.5 * static_cast<double>(diff) * static_cast<double>(diff);
    grad[i] = diff * scale;
  }
  const double sum = block_sum(total);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void square_partials_kernel(const float* x, std::size_t n, double* partials) {
  double total = 0.0;
  const std::size_t stride = static_cast<std::size_t>(kReduceBlocks) * kThreads;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(kThreads) + threadIdx.x; i < n; i += stride) {
    const double v = static_cast<double>(x[i]);
    total += v * v;
  }
  const double sum = block_sum(total);
  if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

__global__ void finish_sum_kernel(const double* partials, double* out) {
  const double sum = block_sum(threadIdx.x < kReduceBlocks ? partials[threadIdx.x] : 0.0);
  if (threadIdx.x == 0) *out = sum;
}

__global__ void poison_kernel(float* x, std::size_t index) { x[index] = nanf(""); }

__global__ void sgd_kernel(float* param, const float* grad, float* velocity, std::size_t n, float lr,
                           float momentum, float weight_decay, float grad_scale) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float g = grad[i] * grad_scale + weight_decay * param[i];
    const float v = momentum * velocity[i] + g;
    velocity[i] = v;
    param[i] -= lr * v;
  }
}

__global__ void adamw_kernel(float* param, const float* grad, float* exp_avg, float* exp_avg_sq,
                             std::size_t n, float lr, float beta1, float beta2, float eps,
                             float weight_decay, float grad_scale, float correction1,
                             float correction2) {
  const float decay = 1.0f - lr * weight_decay;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const float g = grad[i] * grad_scale;
    const float m = beta1 * exp_avg[i] + (1.0f - beta1) * g;
    const float v = beta2 * exp_avg_sq[i] + (1.0f - beta2) * g * g;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    const float m_hat = m / correction1;
    const float v_hat = v / correction2;
    param[i] = param[i] * decay - lr * m_hat / (sqrtf(v_hat) + eps);
  }
}

}  // namespace

cudaError_t add_row_vector(float* x, const float* bias, int rows, int cols, cudaStream_t stream) {
  const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
  add_row_vector_kernel<<<blocks_for(n), kThreads, 0, stream>>>(x, bias, rows, cols);
  return cudaGetLastError();
}

cudaError_t gelu_forward(const float* u, float* z, std::size_t n, cudaStream_t stream) {
  gelu_forward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(u, z, n);
  return cudaGetLastError();
}

cudaError_t gelu_backward(const float* u, float* g, std::size_t n, cudaStream_t stream) {
  gelu_backward_kernel<<<blocks_for(n), kThreads, 0, stream>>>(u, g, n);
  return cudaGetLastError();
}

cudaError_t add(float* dst, const float* src, std::size_t n, cudaStream_t stream) {
  add_kernel<<<blocks_for(n), kThreads, 0, stream>>>(dst, src, n);
  return cudaGetLastError();
}

cudaError_t column_sums(const float* x, float* out, int rows, int cols, cudaStream_t stream) {
  const auto blocks = static_cast<unsigned int>((cols + kThreads - 1) / kThreads);
  column_sums_kernel<<<blocks == 0 ? 1 : blocks, kThreads, 0, stream>>>(x, out, rows, cols);
  return cudaGetLastError();
}

cudaError_t mse_loss_and_grad(const float* y, const float* target, float scale, float* grad,
                              std::size_t n, double* partials, double* loss, cudaStream_t stream) {
  mse_partials_kernel<<<kReduceBlocks, kThreads, 0, stream>>>(y, target, scale, grad, n, partials);
  finish_sum_kernel<<<1, kThreads, 0, stream>>>(partials, loss);
  return cudaGetLastError();
}

cudaError_t sum_squares(const float* x, std::size_t n, double* partials, double* out,
                        cudaStream_t stream) {
  square_partials_kernel<<<kReduceBlocks, kThreads, 0, stream>>>(x, n, partials);
  finish_sum_kernel<<<1, kThreads, 0, stream>>>(partials, out);
  return cudaGetLastError();
}

cudaError_t poison(float* x, std::size_t index, cudaStream_t stream) {
  poison_kernel<<<1, 1, 0, stream>>>(x, index);
  return cudaGetLastError();
}

cudaError_t sgd_update(float* param, const float* grad, float* velocity, std::size_t n, float lr,
                       float momentum, float weight_decay, float grad_scale, cudaStream_t stream) {
  sgd_kernel<<<blocks_for(n), kThreads, 0, stream>>>(param, grad, velocity, n, lr, momentum,
                                                     weight_decay, grad_scale);
  return cudaGetLastError();
}

cudaError_t adamw_update(float* param, const float* grad, float* exp_avg, float* exp_avg_sq,
                         std::size_t n, float lr, float beta1, float beta2, float eps,
                         float weight_decay, float grad_scale, float correction1,
                         float correction2, cudaStream_t stream) {
  adamw_kernel<<<blocks_for(n), kThreads, 0, stream>>>(param, grad, exp_avg, exp_avg_sq, n, lr,
                                                       beta1, beta2, eps, weight_decay, grad_scale,
                                                       correction1, correction2);
  return cudaGetLastError();
}

}  // namespace zb::exec::cuda::kernels
