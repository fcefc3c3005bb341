// The CPU device: host memory, OpenBLAS GEMMs (one BLAS thread), plain loops for the rest.
#include "exec/cpu/cpu_device.h"

#include <cblas.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "exec/runtime/exec_error.h"
#include "exec/runtime/gemm_shape.h"

namespace zb::exec {

namespace {

constexpr std::size_t kAlignmentBytes = 64;

void require_same_shape(const Tensor& a, const Tensor& b, const char* what) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) {
    throw ExecError(fmt::format("{}: shape mismatch {}x{} vs {}x{}", what, a.rows(), a.cols(),
                                b.rows(), b.cols()));
  }
}

// tanh-approximated GELU and its derivative, in float, the same code for every caller.
constexpr float kGeluC = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kGeluK = 0.044715f;

float gelu(float u) {
  const float t = std::tanh(kGeluC * (u + kGeluK * u * u * u));
  return 0.5f * u * (1.0f + t);
}

float gelu_derivative(float u) {
  const float t = std::tanh(kGeluC * (u + kGeluK * u * u * u));
  return 0.5f * (1.0f + t) + 0.5f * u * (1.0f - t * t) * kGeluC * (1.0f + 3.0f * kGeluK * u * u);
}

}  // namespace

void use_single_threaded_blas() { openblas_set_num_threads(1); }

CpuDevice::CpuDevice(int index, Clock::time_point epoch) : index_(index), epoch_(epoch) {}

std::string CpuDevice::description() const { return fmt::format("cpu:{}", index_); }

Tensor CpuDevice::alloc(int rows, int cols) {
  if (rows < 0 || cols < 0) throw ExecError(fmt::format("alloc: bad shape {}x{}", rows, cols));
  const std::size_t bytes = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(float);
  const std::size_t rounded = (bytes + kAlignmentBytes - 1) / kAlignmentBytes * kAlignmentBytes;
  void* raw = std::aligned_alloc(kAlignmentBytes, rounded == 0 ? kAlignmentBytes : rounded);
  if (raw == nullptr) throw ExecError(fmt::format("cpu:{}: out of memory allocating {} bytes", index_, bytes));
  std::memset(raw, 0, rounded == 0 ? kAlignmentBytes : rounded);
  return Tensor(std::shared_ptr<float>(static_cast<float*>(raw), [](float* p) { std::free(p); }),
                rows, cols);
}

void CpuDevice::upload(Tensor& dst, std::span<const float> host) {
  if (host.size() != dst.size()) {
    throw ExecError(fmt::format("upload: {} values for a {}x{} tensor", host.size(), dst.rows(), dst.cols()));
  }
  if (!host.empty()) std::memcpy(dst.data(), host.data(), dst.size_bytes());
}

std::vector<float> CpuDevice::download(const Tensor& src) {
  return std::vector<float>(src.data(), src.data() + src.size());
}

void CpuDevice::copy(const Tensor& src, Tensor& dst) {
  require_same_shape(src, dst, "copy");
  if (src.size() != 0) std::memcpy(dst.data(), src.data(), src.size_bytes());
}

Tensor CpuDevice::clone(const Tensor& src) {
  Tensor out = alloc(src.rows(), src.cols());
  copy(src, out);
  return out;
}

void CpuDevice::gemm(bool transpose_a, bool transpose_b, float alpha, const Tensor& a,
                     const Tensor& b, float beta, Tensor& c) {
  const auto [m, n, k] = checked_gemm_shape(transpose_a, transpose_b, a, b, c);
  cblas_sgemm(CblasRowMajor, transpose_a ? CblasTrans : CblasNoTrans,
              transpose_b ? CblasTrans : CblasNoTrans, m, n, k, alpha, a.data(), a.cols(),
              b.data(), b.cols(), beta, c.data(), c.cols());
}

void CpuDevice::add_row_vector(Tensor& x, const Tensor& bias) {
  if (bias.rows() != 1 || bias.cols() != x.cols()) throw ExecError("add_row_vector: bias shape mismatch");
  const auto cols = static_cast<std::size_t>(x.cols());
  for (int r = 0; r < x.rows(); ++r) {
    float* row = x.data() + static_cast<std::size_t>(r) * cols;
    for (std::size_t j = 0; j < cols; ++j) row[j] += bias.data()[j];
  }
}

void CpuDevice::gelu_forward(const Tensor& u, Tensor& z) {
  require_same_shape(u, z, "gelu_forward");
  for (std::size_t i = 0; i < u.size(); ++i) z.data()[i] = gelu(u.data()[i]);
}

void CpuDevice::gelu_backward(const Tensor& u, Tensor& g) {
  require_same_shape(u, g, "gelu_backward");
  for (std::size_t i = 0; i < u.size(); ++i) g.data()[i] *= gelu_derivative(u.data()[i]);
}

void CpuDevice::add(Tensor& dst, const Tensor& src) {
  require_same_shape(src, dst, "add");
  for (std::size_t i = 0; i < dst.size(); ++i) dst.data()[i] += src.data()[i];
}

void CpuDevice::column_sums(const Tensor& x, Tensor& out) {
  if (out.rows() != 1 || out.cols() != x.cols()) throw ExecError("column_sums: output shape mismatch");
  const auto cols = static_cast<std::size_t>(x.cols());
  std::memset(out.data(), 0, out.size_bytes());
  for (int r = 0; r < x.rows(); ++r) {
    const float* row = x.data() + static_cast<std::size_t>(r) * cols;
    for (std::size_t j = 0; j < cols; ++j) out.data()[j] += row[j];
  }
}

double CpuDevice::mse_loss_and_grad(const Tensor& y, const Tensor& target, float grad_scale,
                                    Tensor& grad) {
  require_same_shape(y, target, "mse_loss_and_grad");
  require_same_shape(y, grad, "mse_loss_and_grad");
  double loss = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const float diff = y.data()[i] - target.data()[i];
    loss += 0.5 * static_cast<double>(diff) * static_cast<double>(diff);
    grad.data()[i] = diff * grad_scale;
  }
  return loss;
}

double CpuDevice::sum_squares(const Tensor& x) {
  double total = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const auto v = static_cast<double>(x.data()[i]);
    total += v * v;
  }
  return total;
}

void CpuDevice::poison(Tensor& x, std::size_t index) {
  if (index >= x.size()) throw ExecError("poison: index out of range");
  x.data()[index] = std::numeric_limits<float>::quiet_NaN();
}

void CpuDevice::sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity,
                           const SgdUpdate& update) {
  require_same_shape(param, grad, "sgd_update");
  require_same_shape(param, velocity, "sgd_update");
  for (std::size_t i = 0; i < param.size(); ++i) {
    const float g = grad.data()[i] * update.grad_scale + update.weight_decay * param.data()[i];
    const float v = update.momentum * velocity.data()[i] + g;
    velocity.data()[i] = v;
    param.data()[i] -= update.lr * v;
  }
}

void CpuDevice::adamw_update(Tensor& param, const Tensor& grad, Tensor& exp_avg,
                             Tensor& exp_avg_sq, const AdamWUpdate& update) {
  require_same_shape(param, grad, "adamw_update");
  require_same_shape(param, exp_avg, "adamw_update");
  require_same_shape(param, exp_avg_sq, "adamw_update");
  const auto step = static_cast<double>(update.step);
  const auto correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(update.beta1), step));
  const auto correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(update.beta2), step));
  const float decay = 1.0f - update.lr * update.weight_decay;
  for (std::size_t i = 0; i < param.size(); ++i) {
    const float g = grad.data()[i] * update.grad_scale;
    const float m = update.beta1 * exp_avg.data()[i] + (1.0f - update.beta1) * g;
    const float v = update.beta2 * exp_avg_sq.data()[i] + (1.0f - update.beta2) * g * g;
    exp_avg.data()[i] = m;
    exp_avg_sq.data()[i] = v;
    const float m_hat = m / correction1;
    const float v_hat = v / correction2;
    param.data()[i] = param.data()[i] * decay - update.lr * m_hat / (std::sqrt(v_hat) + update.eps);
  }
}

std::size_t CpuDevice::record_event() {
  events_.push_back(Clock::now());
  return events_.size() - 1;
}

double CpuDevice::event_time_us(std::size_t event) {
  if (event >= events_.size()) throw ExecError(fmt::format("cpu:{}: unknown event {}", index_, event));
  return std::chrono::duration<double, std::micro>(events_[event] - epoch_).count();
}

}  // namespace zb::exec
