// A dense fp32 matrix living in one device's memory (host memory for the CPU backend).
#pragma once

#include <cstddef>
#include <memory>
#include <utility>

namespace zb::exec {

// Row-major [rows x cols]. Storage is shared and freed by the device that allocated it, so a
// tensor handed over a channel keeps its memory alive until the receiver drops it.
class Tensor {
 public:
  Tensor() = default;
  Tensor(std::shared_ptr<float> storage, int rows, int cols)
      : storage_(std::move(storage)), rows_(rows), cols_(cols) {}

  // A moved-from tensor is empty (shape 0 x 0), so memory accounting never counts it twice.
  Tensor(const Tensor&) = default;
  Tensor& operator=(const Tensor&) = default;
  Tensor(Tensor&& other) noexcept
      : storage_(std::move(other.storage_)),
        rows_(std::exchange(other.rows_, 0)),
        cols_(std::exchange(other.cols_, 0)) {}
  Tensor& operator=(Tensor&& other) noexcept {
    storage_ = std::move(other.storage_);
    rows_ = std::exchange(other.rows_, 0);
    cols_ = std::exchange(other.cols_, 0);
    return *this;
  }
  ~Tensor() = default;

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  std::size_t size() const { return static_cast<std::size_t>(rows_) * static_cast<std::size_t>(cols_); }
  std::size_t size_bytes() const { return size() * sizeof(float); }
  bool empty() const { return storage_ == nullptr; }

  // Device pointer (host pointer on the CPU backend); only the owning device's kernels use it.
  float* data() const { return storage_.get(); }

 private:
  std::shared_ptr<float> storage_;
  int rows_ = 0;
  int cols_ = 0;
};

}  // namespace zb::exec
