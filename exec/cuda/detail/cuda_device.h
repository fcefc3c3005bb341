// One CUDA device of the executor: a GPU (or a green-context slice of one), its compute stream
// (and a second one for the partner of an overlapped pair), cuBLAS GEMMs, the small kernels,
// stream-ordered memory and CUDA-event timing.
#pragma once

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "exec/cuda/detail/precision.h"
#include "exec/runtime/device.h"

namespace zb::exec::cuda {

// Where a device runs: a GPU ordinal and, for a virtual device, the green context that owns its
// share of the SMs (null: the GPU's primary context, all SMs).
struct DevicePlacement {
  int ordinal = 0;
  CUgreenCtx green = nullptr;
  CUcontext context = nullptr;  // cuCtxFromGreenCtx(green), or null for the primary context
  int sm_count = 0;             // SMs this device may use (0: unknown / all)
  std::string label;            // "cuda:1", "cuda:0 virtual 2/4 (32 SMs)"
};

// Tensors are freed by the device that allocated them, on its compute stream, at its next
// alloc() or synchronize(): a tensor dropped by another thread (a receiver releasing a sender's
// buffer) never touches another device's stream.
class FreeList {
 public:
  void push(void* pointer);
  std::vector<void*> take();
  void close();  // the device is gone: later frees leak instead of touching a dead stream

 private:
  std::mutex mutex_;
  std::vector<void*> pending_;
  bool closed_ = false;
};

class CudaDevice final : public Device {
 public:
  using Clock = std::chrono::steady_clock;

  CudaDevice(int index, DevicePlacement placement, Precision precision, Clock::time_point epoch);
  ~CudaDevice() override;
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  int index() const override { return index_; }
  std::string description() const override { return placement_.label; }

  Tensor alloc(int rows, int cols) override;
  void upload(Tensor& dst, std::span<const float> host) override;
  std::vector<float> download(const Tensor& src) override;
  void copy(const Tensor& src, Tensor& dst) override;
  // src may live on another device; it must be complete (its device synchronised).
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

  // The second part of an overlapped pair runs on the partner lane, forked from the compute
  // stream where the pair began and joined back after it (Device::begin_overlap).
  void begin_overlap() override;
  void switch_to_partner() override;
  void end_overlap() override;

  std::size_t record_event() override;
  void synchronize() override;
  double event_time_us(std::size_t event) override;
  // Also re-anchors the clock: the next events are timed against a fresh epoch event, so float
  // millisecond differences stay small and cross-device alignment is renewed every step.
  void clear_events() override;

  // For the backend and the fabric.
  const DevicePlacement& placement() const { return placement_; }
  Precision precision() const { return precision_; }
  // The stream work is issued on now: the compute stream, or the partner lane's inside a pair.
  cudaStream_t current_stream() const { return lanes_[active_].stream; }
  // Makes this device's context current on the calling thread (cudaSetDevice or the green context).
  void make_current() const;
  // A new non-blocking stream in this device's context (the caller destroys it).
  cudaStream_t create_stream() const;
  // Storage without the zero fill (the fabric overwrites it at once).
  Tensor alloc_uninitialized(int rows, int cols);
  // NVTX: the text-form names of this device's actions, in schedule order; each step's events
  // come in start/end pairs, one pair per action (what the engine records), and the k-th pair is
  // shown as a range named labels[k]. Empty: no ranges.
  void set_action_labels(std::vector<std::string> labels);

 private:
  void release_pending_frees();
  std::string where(const char* call) const;
  // A pinned host buffer of at least `bytes` whose previous copy has finished.
  void* staging_buffer(std::size_t bytes, cudaEvent_t*& done);

  // A stream with what its kernels must not share with a concurrent stream: a cuBLAS handle and
  // workspace, the reduction scratch and its pinned result.
  struct Lane {
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    void* blas_workspace = nullptr;
    double* reduce_scratch = nullptr;  // partials + one result, device memory
    double* host_result = nullptr;     // pinned
  };
  static constexpr int kCompute = 0;
  static constexpr int kPartner = 1;
  void create_lane(Lane& lane);
  void destroy_lane(Lane& lane);
  cudaStream_t stream() const { return lanes_[active_].stream; }
  const Lane& lane() const { return lanes_[active_]; }

  int index_;
  DevicePlacement placement_;
  Precision precision_;
  Clock::time_point epoch_;
  Lane lanes_[2];
  int active_ = kCompute;
  bool in_pair_ = false;           // between begin_overlap() and end_overlap()
  cudaEvent_t fork_ = nullptr;     // the compute stream where the pair began
  cudaEvent_t partner_done_ = nullptr;
  std::shared_ptr<FreeList> frees_;
  std::vector<cudaEvent_t> events_;
  std::size_t used_events_ = 0;
  cudaEvent_t anchor_ = nullptr;
  double anchor_us_ = 0;  // host time of the anchor event, us since the backend's epoch
  // Uploads go through pinned buffers: a copy from pageable memory may wait for the stream to
  // drain, which would stall the host (and then the GPU) at every F of the first and last stage.
  struct Staging {
    void* host = nullptr;
    std::size_t bytes = 0;
    cudaEvent_t done = nullptr;
    bool used = false;
  };
  std::vector<Staging> staging_;
  std::vector<std::string> labels_;
  bool range_open_ = false;
};

}  // namespace zb::exec::cuda
