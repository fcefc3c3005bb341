// One compute device as the engine sees it: memory, the kernels the model needs, a clock.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "exec/runtime/tensor.h"

namespace zb::exec {

// Hyper-parameters of one optimizer update, passed to the device's fused update kernels.
struct SgdUpdate {
  float lr = 0;
  float momentum = 0;
  float weight_decay = 0;
  float grad_scale = 1;  // clipping coefficient (exactly 1 when no clipping is needed)
};

struct AdamWUpdate {
  float lr = 0;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float eps = 1e-8f;
  float weight_decay = 0;
  float grad_scale = 1;
  int step = 1;  // 1-based count of applied updates, for bias correction
};

// Every kernel is deterministic: the same inputs give the same bits on every call, whichever
// device or thread runs it. That is what makes pipeline runs bitwise equal to the reference.
// Kernels are issued in order on the device's compute stream; a backend may run them
// asynchronously (CUDA) as long as download(), sum_squares() and event times synchronise.
class Device {
 public:
  virtual ~Device() = default;

  virtual int index() const = 0;
  virtual std::string description() const = 0;

  // Memory. alloc() returns zero-filled storage.
  virtual Tensor alloc(int rows, int cols) = 0;
  virtual void upload(Tensor& dst, std::span<const float> host) = 0;
  virtual std::vector<float> download(const Tensor& src) = 0;
  virtual void copy(const Tensor& src, Tensor& dst) = 0;
  // Copies src into a fresh tensor of this device (src may belong to another device).
  virtual Tensor clone(const Tensor& src) = 0;

  // c = alpha * op(a) * op(b) + beta * c, with op = transpose when the flag is set.
  virtual void gemm(bool transpose_a, bool transpose_b, float alpha, const Tensor& a,
                    const Tensor& b, float beta, Tensor& c) = 0;
  // x[r, :] += bias[0, :] for every row r.
  virtual void add_row_vector(Tensor& x, const Tensor& bias) = 0;
  // z = gelu(u) (tanh approximation).
  virtual void gelu_forward(const Tensor& u, Tensor& z) = 0;
  // g = g * gelu'(u), in place.
  virtual void gelu_backward(const Tensor& u, Tensor& g) = 0;
  // dst += src.
  virtual void add(Tensor& dst, const Tensor& src) = 0;
  // out[0, j] = sum over rows r (in order) of x[r, j].
  virtual void column_sums(const Tensor& x, Tensor& out) = 0;
  // grad = (y - target) * grad_scale; returns sum of 0.5 (y - target)^2 (in double, row-major order).
  virtual double mse_loss_and_grad(const Tensor& y, const Tensor& target, float grad_scale,
                                   Tensor& grad) = 0;
  // Sum of squares in double, row-major order (NaN or inf when any element is not finite).
  virtual double sum_squares(const Tensor& x) = 0;
  // Sets element `index` to a NaN (fault injection for the non-finite skip).
  virtual void poison(Tensor& x, std::size_t index) = 0;

  // Fused optimizer updates of one parameter tensor.
  virtual void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity,
                          const SgdUpdate& update) = 0;
  virtual void adamw_update(Tensor& param, const Tensor& grad, Tensor& exp_avg,
                            Tensor& exp_avg_sq, const AdamWUpdate& update) = 0;

  // Overlapped pairs (Action::overlap_next: DualPipe's F&B). The validator guarantees that the
  // two parts of a pair do not depend on each other, so a backend may run them concurrently:
  // begin_overlap() marks the fork point (before the first part), switch_to_partner() sends the
  // work issued after it (the second part) to a second stream that starts at the fork point, and
  // end_overlap() joins that stream back, so that later work follows both parts. The default is
  // one stream: the parts run one after the other (the CPU device runs both on its thread).
  virtual void begin_overlap() {}
  virtual void switch_to_partner() {}
  virtual void end_overlap() {}

  // Clock. record_event() marks the point the issued work has reached; event_time_us() gives
  // its time in microseconds since the backend's epoch (shared by all devices), once
  // synchronize() has returned. Events are numbered from 0 after clear_events().
  virtual std::size_t record_event() = 0;
  virtual void synchronize() = 0;
  virtual double event_time_us(std::size_t event) = 0;
  virtual void clear_events() = 0;
};

}  // namespace zb::exec
