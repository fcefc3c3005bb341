// One CUDA device of the executor: a GPU (or a green-context slice of one), its compute stream,
// cuBLAS GEMMs, the small kernels, stream-ordered memory and CUDA-event timing.
#include "exec/cuda/detail/cuda_device.h"

#include <fmt/format.h>
#include <nvtx3/nvToolsExt.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <limits>

#include "exec/cuda/detail/cuda_check.h"
#include "exec/runtime/gemm_shape.h"
#include "exec/cuda/detail/cuda_kernels.h"
#include "exec/cuda/detail/driver_api.h"

namespace zb::exec::cuda {

namespace {

constexpr std::size_t kBlasWorkspaceBytes = 32u << 20;  // fixed: cuBLAS never picks its own
constexpr std::size_t kMinAllocBytes = 256;

void require_same_shape(const Tensor& a, const Tensor& b, const char* what) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) {
    throw ExecError(fmt::format("{}: shape mismatch {}x{} vs {}x{}", what, a.rows(), a.cols(),
                                b.rows(), b.cols()));
  }
}

}  // namespace

void FreeList::push(void* pointer) {
  std::lock_guard lock(mutex_);
  if (!closed_) pending_.push_back(pointer);
}

std::vector<void*> FreeList::take() {
  std::lock_guard lock(mutex_);
  std::vector<void*> out;
  out.swap(pending_);
  return out;
}

void FreeList::close() {
  std::lock_guard lock(mutex_);
  closed_ = true;
}

CudaDevice::CudaDevice(int index, DevicePlacement placement, Precision precision,
                       Clock::time_point epoch)
    : index_(index),
      placement_(std::move(placement)),
      precision_(precision),
      epoch_(epoch),
      frees_(std::make_shared<FreeList>()) {
  make_current();
  for (Lane& lane : lanes_) create_lane(lane);
  check(cudaEventCreate(&anchor_), where("cudaEventCreate"));
  check(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming), where("cudaEventCreate(fork)"));
  check(cudaEventCreateWithFlags(&partner_done_, cudaEventDisableTiming), where("cudaEventCreate(join)"));
  // Keep freed memory in the pool: a training step frees and reallocates the same sizes.
  cudaMemPool_t pool = nullptr;
  check(cudaDeviceGetDefaultMemPool(&pool, placement_.ordinal), where("cudaDeviceGetDefaultMemPool"));
  std::uint64_t threshold = std::numeric_limits<std::uint64_t>::max();
  check(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold),
        where("cudaMemPoolSetAttribute"));
  clear_events();
}

CudaDevice::~CudaDevice() {
  // Destructors do not throw: errors here are ignored (the process is usually ending).
  try {
    make_current();
  } catch (const std::exception&) {
    // the context is gone: the calls below fail quietly
  }
  if (range_open_) nvtxRangePop();
  const cudaStream_t compute = lanes_[kCompute].stream;
  for (const Lane& lane : lanes_) cudaStreamSynchronize(lane.stream);
  for (void* p : frees_->take()) cudaFreeAsync(p, compute);
  frees_->close();
  cudaStreamSynchronize(compute);
  for (cudaEvent_t e : events_) cudaEventDestroy(e);
  for (auto& slot : staging_) {
    cudaEventDestroy(slot.done);
    cudaFreeHost(slot.host);
  }
  for (cudaEvent_t e : {anchor_, fork_, partner_done_}) {
    if (e) cudaEventDestroy(e);
  }
  for (Lane& lane : lanes_) destroy_lane(lane);
}

// Reproducible GEMMs: no atomics, default math (TF32 only if asked for), a workspace we own so
// cuBLAS never switches algorithms because its own pool is short. Both lanes are set up alike, so
// a pass gives the same bits on either.
void CudaDevice::create_lane(Lane& lane) {
  lane.stream = create_stream();
  check(cublasCreate(&lane.blas), where("cublasCreate"));
  check(cublasSetStream(lane.blas, lane.stream), where("cublasSetStream"));
  check(cublasSetAtomicsMode(lane.blas, CUBLAS_ATOMICS_NOT_ALLOWED), where("cublasSetAtomicsMode"));
  check(cublasSetMathMode(lane.blas, CUBLAS_DEFAULT_MATH), where("cublasSetMathMode"));
  check(cudaMalloc(&lane.blas_workspace, kBlasWorkspaceBytes), where("cudaMalloc(cuBLAS workspace)"));
  check(cublasSetWorkspace(lane.blas, lane.blas_workspace, kBlasWorkspaceBytes), where("cublasSetWorkspace"));
  check(cudaMalloc(reinterpret_cast<void**>(&lane.reduce_scratch),
                   (kernels::reduction_partials() + 1) * sizeof(double)),
        where("cudaMalloc(reduction scratch)"));
  check(cudaMallocHost(reinterpret_cast<void**>(&lane.host_result), sizeof(double)), where("cudaMallocHost"));
}

void CudaDevice::destroy_lane(Lane& lane) {
  if (lane.host_result) cudaFreeHost(lane.host_result);
  if (lane.reduce_scratch) cudaFree(lane.reduce_scratch);
  if (lane.blas) cublasDestroy(lane.blas);
  if (lane.blas_workspace) cudaFree(lane.blas_workspace);
  if (lane.stream) cudaStreamDestroy(lane.stream);
  lane = Lane{};
}

std::string CudaDevice::where(const char* call) const {
  return fmt::format("{} (device {}): {}", placement_.label, index_, call);
}

void CudaDevice::make_current() const {
  if (placement_.context != nullptr) {
    CUcontext current = nullptr;
    check(driver_api().ctx_get_current(&current), where("cuCtxGetCurrent"));
    if (current != placement_.context) check(driver_api().ctx_set_current(placement_.context), where("cuCtxSetCurrent(green context)"));
  } else {
    check(cudaSetDevice(placement_.ordinal), where("cudaSetDevice"));
  }
}

cudaStream_t CudaDevice::create_stream() const {
  cudaStream_t stream = nullptr;
  if (placement_.green != nullptr) {
    CUstream raw = nullptr;
    check(driver_api().green_ctx_stream_create(&raw, placement_.green, CU_STREAM_NON_BLOCKING, 0),
          where("cuGreenCtxStreamCreate"));
    stream = raw;
  } else {
    make_current();
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), where("cudaStreamCreateWithFlags"));
  }
  return stream;
}

// Frees are ordered on the compute stream. Inside a pair a dropped tensor may still be in use by
// the other lane, so frees wait for the join, after which the compute stream follows both.
void CudaDevice::release_pending_frees() {
  if (in_pair_) return;
  for (void* p : frees_->take()) check(cudaFreeAsync(p, lanes_[kCompute].stream), where("cudaFreeAsync"));
}

Tensor CudaDevice::alloc_uninitialized(int rows, int cols) {
  if (rows < 0 || cols < 0) throw ExecError(fmt::format("alloc: bad shape {}x{}", rows, cols));
  make_current();
  release_pending_frees();
  const std::size_t bytes = static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(float);
  void* raw = nullptr;
  check(cudaMallocAsync(&raw, bytes < kMinAllocBytes ? kMinAllocBytes : bytes, stream()),
        where(fmt::format("cudaMallocAsync({} bytes)", bytes).c_str()));
  std::shared_ptr<FreeList> frees = frees_;
  return Tensor(std::shared_ptr<float>(static_cast<float*>(raw), [frees](float* p) { frees->push(p); }),
                rows, cols);
}

Tensor CudaDevice::alloc(int rows, int cols) {
  Tensor out = alloc_uninitialized(rows, cols);
  if (out.size_bytes() != 0) {
    check(cudaMemsetAsync(out.data(), 0, out.size_bytes(), stream()), where("cudaMemsetAsync"));
  }
  return out;
}

void CudaDevice::upload(Tensor& dst, std::span<const float> host) {
  if (host.size() != dst.size()) {
    throw ExecError(fmt::format("upload: {} values for a {}x{} tensor", host.size(), dst.rows(), dst.cols()));
  }
  if (host.empty()) return;
  make_current();
  cudaEvent_t* done = nullptr;
  void* pinned = staging_buffer(dst.size_bytes(), done);
  std::memcpy(pinned, host.data(), dst.size_bytes());
  check(cudaMemcpyAsync(dst.data(), pinned, dst.size_bytes(), cudaMemcpyHostToDevice, stream()),
        where("cudaMemcpyAsync(upload)"));
  check(cudaEventRecord(*done, stream()), where("cudaEventRecord(upload)"));
}

void* CudaDevice::staging_buffer(std::size_t bytes, cudaEvent_t*& done) {
  for (auto& slot : staging_) {
    if (slot.bytes < bytes) continue;
    if (slot.used) {
      const cudaError_t status = cudaEventQuery(slot.done);
      if (status == cudaErrorNotReady) continue;
      check(status, where("cudaEventQuery(upload)"));
    }
    slot.used = true;
    done = &slot.done;
    return slot.host;
  }
  Staging slot;
  slot.bytes = bytes;
  check(cudaMallocHost(&slot.host, bytes), where(fmt::format("cudaMallocHost({} bytes)", bytes).c_str()));
  check(cudaEventCreateWithFlags(&slot.done, cudaEventDisableTiming), where("cudaEventCreate"));
  slot.used = true;
  staging_.push_back(slot);
  done = &staging_.back().done;
  return staging_.back().host;
}

std::vector<float> CudaDevice::download(const Tensor& src) {
  std::vector<float> out(src.size());
  if (out.empty()) return out;
  make_current();
  check(cudaMemcpyAsync(out.data(), src.data(), src.size_bytes(), cudaMemcpyDeviceToHost, stream()),
        where("cudaMemcpyAsync(download)"));
  check(cudaStreamSynchronize(stream()), where("cudaStreamSynchronize(download)"));
  return out;
}

void CudaDevice::copy(const Tensor& src, Tensor& dst) {
  require_same_shape(src, dst, "copy");
  if (src.size() == 0) return;
  make_current();
  check(cudaMemcpyAsync(dst.data(), src.data(), src.size_bytes(), cudaMemcpyDeviceToDevice, stream()),
        where("cudaMemcpyAsync(copy)"));
}

Tensor CudaDevice::clone(const Tensor& src) {
  Tensor out = alloc_uninitialized(src.rows(), src.cols());
  if (src.size() != 0) {
    check(cudaMemcpyAsync(out.data(), src.data(), src.size_bytes(), cudaMemcpyDefault, stream()),
          where("cudaMemcpyAsync(clone)"));
  }
  return out;
}

void CudaDevice::gemm(bool transpose_a, bool transpose_b, float alpha, const Tensor& a,
                      const Tensor& b, float beta, Tensor& c) {
  const auto [m, n, k] = checked_gemm_shape(transpose_a, transpose_b, a, b, c);
  if (m == 0 || n == 0) return;
  make_current();
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap the operands and keep
  // each transpose flag (a row-major matrix read column-major is its transpose).
  const cublasComputeType_t compute =
      precision_ == Precision::bf16 ? CUBLAS_COMPUTE_32F_FAST_16BF : CUBLAS_COMPUTE_32F;
  check(cublasGemmEx(lane().blas, transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N,
                     transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N, n, m, k, &alpha, b.data(), CUDA_R_32F,
                     b.cols(), a.data(), CUDA_R_32F, a.cols(), &beta, c.data(), CUDA_R_32F, c.cols(),
                     compute, CUBLAS_GEMM_DEFAULT),
        where(fmt::format("cublasGemmEx({}x{}x{})", m, n, k).c_str()));
}

void CudaDevice::add_row_vector(Tensor& x, const Tensor& bias) {
  if (bias.rows() != 1 || bias.cols() != x.cols()) throw ExecError("add_row_vector: bias shape mismatch");
  if (x.size() == 0) return;
  make_current();
  check(kernels::add_row_vector(x.data(), bias.data(), x.rows(), x.cols(), stream()), where("add_row_vector"));
}

void CudaDevice::gelu_forward(const Tensor& u, Tensor& z) {
  require_same_shape(u, z, "gelu_forward");
  if (u.size() == 0) return;
  make_current();
  check(kernels::gelu_forward(u.data(), z.data(), u.size(), stream()), where("gelu_forward"));
}

void CudaDevice::gelu_backward(const Tensor& u, Tensor& g) {
  require_same_shape(u, g, "gelu_backward");
  if (u.size() == 0) return;
  make_current();
  check(kernels::gelu_backward(u.data(), g.data(), u.size(), stream()), where("gelu_backward"));
}

void CudaDevice::add(Tensor& dst, const Tensor& src) {
  require_same_shape(src, dst, "add");
  if (dst.size() == 0) return;
  make_current();
  check(kernels::add(dst.data(), src.data(), dst.size(), stream()), where("add"));
}

void CudaDevice::column_sums(const Tensor& x, Tensor& out) {
  if (out.rows() != 1 || out.cols() != x.cols()) throw ExecError("column_sums: output shape mismatch");
  if (out.size() == 0) return;
  make_current();
  check(kernels::column_sums(x.data(), out.data(), x.rows(), x.cols(), stream()), where("column_sums"));
}

double CudaDevice::mse_loss_and_grad(const Tensor& y, const Tensor& target, float grad_scale,
                                     Tensor& grad) {
  require_same_shape(y, target, "mse_loss_and_grad");
  require_same_shape(y, grad, "mse_loss_and_grad");
  make_current();
  double* const scratch = lane().reduce_scratch;
  double* const host_result = lane().host_result;
  double* result = scratch + kernels::reduction_partials();
  check(kernels::mse_loss_and_grad(y.data(), target.data(), grad_scale, grad.data(), y.size(),
                                   scratch, result, stream()),
        where("mse_loss_and_grad"));
  check(cudaMemcpyAsync(host_result, result, sizeof(double), cudaMemcpyDeviceToHost, stream()),
        where("cudaMemcpyAsync(loss)"));
  check(cudaStreamSynchronize(stream()), where("cudaStreamSynchronize(loss)"));
  return *host_result;
}

double CudaDevice::sum_squares(const Tensor& x) {
  make_current();
  double* const scratch = lane().reduce_scratch;
  double* const host_result = lane().host_result;
  double* result = scratch + kernels::reduction_partials();
  check(kernels::sum_squares(x.data(), x.size(), scratch, result, stream()), where("sum_squares"));
  check(cudaMemcpyAsync(host_result, result, sizeof(double), cudaMemcpyDeviceToHost, stream()),
        where("cudaMemcpyAsync(sum of squares)"));
  check(cudaStreamSynchronize(stream()), where("cudaStreamSynchronize(sum of squares)"));
  return *host_result;
}

void CudaDevice::poison(Tensor& x, std::size_t index) {
  if (index >= x.size()) throw ExecError("poison: index out of range");
  make_current();
  check(kernels::poison(x.data(), index, stream()), where("poison"));
}

void CudaDevice::sgd_update(Tensor& param, const Tensor& grad, Tensor& velocity,
                            const SgdUpdate& update) {
  require_same_shape(param, grad, "sgd_update");
  require_same_shape(param, velocity, "sgd_update");
  if (param.size() == 0) return;
  make_current();
  check(kernels::sgd_update(param.data(), grad.data(), velocity.data(), param.size(), update.lr,
                            update.momentum, update.weight_decay, update.grad_scale, stream()),
        where("sgd_update"));
}

void CudaDevice::adamw_update(Tensor& param, const Tensor& grad, Tensor& exp_avg,
                              Tensor& exp_avg_sq, const AdamWUpdate& update) {
  require_same_shape(param, grad, "adamw_update");
  require_same_shape(param, exp_avg, "adamw_update");
  require_same_shape(param, exp_avg_sq, "adamw_update");
  if (param.size() == 0) return;
  make_current();
  // Bias corrections exactly as the CPU device computes them (double pow, then float).
  const auto step = static_cast<double>(update.step);
  const auto correction1 = static_cast<float>(1.0 - std::pow(static_cast<double>(update.beta1), step));
  const auto correction2 = static_cast<float>(1.0 - std::pow(static_cast<double>(update.beta2), step));
  check(kernels::adamw_update(param.data(), grad.data(), exp_avg.data(), exp_avg_sq.data(),
                              param.size(), update.lr, update.beta1, update.beta2, update.eps,
                              update.weight_decay, update.grad_scale, correction1, correction2,
                              stream()),
        where("adamw_update"));
}

void CudaDevice::set_action_labels(std::vector<std::string> labels) { labels_ = std::move(labels); }

std::size_t CudaDevice::record_event() {
  make_current();
  if (used_events_ == events_.size()) {
    cudaEvent_t event = nullptr;
    check(cudaEventCreate(&event), where("cudaEventCreate"));
    events_.push_back(event);
  }
  const std::size_t id = used_events_++;
  check(cudaEventRecord(events_[id], stream()), where("cudaEventRecord"));
  // NVTX: event 2k starts action k, event 2k+1 ends it (the engine's pairing).
  if (!labels_.empty()) {
    if (id % 2 == 0 && id / 2 < labels_.size()) {
      nvtxRangePushA(labels_[id / 2].c_str());
      range_open_ = true;
    } else if (id % 2 == 1 && range_open_) {
      nvtxRangePop();
      range_open_ = false;
    }
  }
  return id;
}

void CudaDevice::synchronize() {
  make_current();
  for (const Lane& lane : lanes_) check(cudaStreamSynchronize(lane.stream), where("cudaStreamSynchronize"));
  release_pending_frees();
}

void CudaDevice::begin_overlap() {
  if (in_pair_) throw ExecError(fmt::format("{}: an overlapped pair inside another", placement_.label));
  make_current();
  check(cudaEventRecord(fork_, lanes_[kCompute].stream), where("cudaEventRecord(fork)"));
  in_pair_ = true;
}

void CudaDevice::switch_to_partner() {
  if (!in_pair_ || active_ == kPartner) throw ExecError(fmt::format("{}: a partner outside a pair", placement_.label));
  make_current();
  // The partner starts where the pair began, not after the first part: the two run together.
  check(cudaStreamWaitEvent(lanes_[kPartner].stream, fork_, 0), where("cudaStreamWaitEvent(fork)"));
  active_ = kPartner;
}

void CudaDevice::end_overlap() {
  if (!in_pair_) throw ExecError(fmt::format("{}: the end of a pair that did not begin", placement_.label));
  make_current();
  if (active_ == kPartner) {
    check(cudaEventRecord(partner_done_, lanes_[kPartner].stream), where("cudaEventRecord(join)"));
    check(cudaStreamWaitEvent(lanes_[kCompute].stream, partner_done_, 0), where("cudaStreamWaitEvent(join)"));
  }
  active_ = kCompute;
  in_pair_ = false;
  release_pending_frees();
}

double CudaDevice::event_time_us(std::size_t event) {
  if (event >= used_events_) throw ExecError(fmt::format("{}: unknown event {}", placement_.label, event));
  make_current();
  float elapsed_ms = 0;
  check(cudaEventElapsedTime(&elapsed_ms, anchor_, events_[event]), where("cudaEventElapsedTime"));
  return anchor_us_ + 1000.0 * static_cast<double>(elapsed_ms);
}

void CudaDevice::clear_events() {
  make_current();
  if (range_open_) {
    nvtxRangePop();
    range_open_ = false;
  }
  used_events_ = 0;
  for (const Lane& lane : lanes_) check(cudaStreamSynchronize(lane.stream), where("cudaStreamSynchronize(anchor)"));
  // The anchor: an event whose host time is known to a few microseconds. Host time before the
  // record and after it completes bracket the GPU timestamp; the midpoint is the estimate.
  const auto before = Clock::now();
  check(cudaEventRecord(anchor_, lanes_[kCompute].stream), where("cudaEventRecord(anchor)"));
  check(cudaEventSynchronize(anchor_), where("cudaEventSynchronize(anchor)"));
  const auto after = Clock::now();
  const double before_us = std::chrono::duration<double, std::micro>(before - epoch_).count();
  const double after_us = std::chrono::duration<double, std::micro>(after - epoch_).count();
  anchor_us_ = 0.5 * (before_us + after_us);
}

}  // namespace zb::exec::cuda
