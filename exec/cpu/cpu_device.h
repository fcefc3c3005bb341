// The CPU device: host memory, OpenBLAS GEMMs (one BLAS thread), plain loops for the rest.
#pragma once

#include <chrono>
#include <vector>

#include "exec/runtime/device.h"

namespace zb::exec {

class CpuDevice final : public Device {
 public:
  using Clock = std::chrono::steady_clock;

  CpuDevice(int index, Clock::time_point epoch);

  int index() const override { return index_; }
  std::string description() const override;

  Tensor alloc(int rows, int cols) override;
  void upload(Tensor& dst, std::span<const float> host) override;
  std::vector<float> download(const Tensor& src) override;
  void copy(const Tensor& src, Tensor& dst) override;
  Tensor clone(const Tensor& src) override;

  void gemm(bool transpose_a, bool transpose_b, float alpha, const Tensor& a, const Tensor& b,
            float beta, Tensor& c) override;
  void add_row_vector(Tensor& x, const Tensor& bias) override;
  void gelu_forward(const Tensor& u, Tensor& z) override;
  void gelu_backward(const Tensor& u, Tensor& g) override;
  void add(Tensor& dst, const Tensor& src) override;
  void column_sums(const Tensor& x, Tensor& out) override;
  double mse_loss_and_grad(const Tensor& y, const Tensor& target, float grad_scale,
                           Tensor& grad) override;
  double sum_squares(const Tensor& x) override;
  void poison(Tensor& x, std::size_t index) override;

  void sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity,
                  const SgdUpdate& update) override;
  void adamw_update(Tensor& param, const Tensor& grad, Tensor& exp_avg, Tensor& exp_avg_sq,
                    const AdamWUpdate& update) override;

  std::size_t record_event() override;
  void synchronize() override {}
  double event_time_us(std::size_t event) override;
  void clear_events() override { events_.clear(); }

 private:
  int index_;
  Clock::time_point epoch_;
  std::vector<Clock::time_point> events_;
};

// Makes OpenBLAS run every GEMM on the calling thread: one device = one core, and results that
// do not depend on how many threads BLAS would otherwise pick.
void use_single_threaded_blas();

}  // namespace zb::exec
