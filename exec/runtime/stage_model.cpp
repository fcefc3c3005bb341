// One stage of the model on one device: its blocks' F, B and W, saved tensors and gradients.
#include "exec/runtime/stage_model.h"

#include <fmt/format.h>

#include "exec/runtime/exec_error.h"

namespace zb::exec {

namespace {

// A next-in-order value no microbatch has: the up copy parks every contribution until the down
// copy's partial sum arrives.
constexpr int kAwaitingPartialSum = -1;

}  // namespace

StageModel::StageModel(Device& device, const ModelConfig& config, int stage, int stages,
                       int microbatches, GradientSum sum)
    : device_(device),
      config_(config),
      stage_(stage),
      stages_(stages),
      microbatches_(microbatches),
      sum_(sum),
      end_(sum.end < 0 ? microbatches : sum.end),
      layers_(layers_of_stage(stage, stages, config.layers)),
      // The loss is the mean over every element of the step's microbatches of 0.5 (y - target)^2.
      loss_grad_scale_(1.0f / static_cast<float>(microbatches * config.microbatch_size * config.hidden)) {
  for (int layer = layers_.begin; layer < layers_.end; ++layer) {
    Grads params;
    Grads grads;
    for (int p = 0; p < kParamsPerLayer; ++p) {
      const auto [rows, cols] = param_shape(config_, p);
      params[static_cast<std::size_t>(p)] = device_.alloc(rows, cols);
      device_.upload(params[static_cast<std::size_t>(p)], initial_param(config_, layer, p));
      grads[static_cast<std::size_t>(p)] = device_.alloc(rows, cols);
    }
    params_.push_back(std::move(params));
    grads_.push_back(std::move(grads));
  }
  for (int p = 0; p < kParamsPerLayer; ++p) {
    const auto [rows, cols] = param_shape(config_, p);
    scratch_[static_cast<std::size_t>(p)] = device_.alloc(rows, cols);
  }
  losses_.assign(static_cast<std::size_t>(microbatches_), 0.0);
}

void StageModel::begin_step() {
  if (!live_.empty() || !parked_.empty()) {
    throw ExecError(fmt::format("stage {}: a step begins with {} microbatches still holding "
                                "activations", stage_, live_.size()));
  }
  next_in_order_ = sum_.continues ? kAwaitingPartialSum : sum_.first;
  losses_.assign(static_cast<std::size_t>(microbatches_), 0.0);
}

std::size_t StageModel::bytes_of(const MicrobatchState& state) const {
  std::size_t total = state.loss_grad.size_bytes();
  for (const auto& b : state.blocks) {
    total += b.x.size_bytes() + b.u.size_bytes() + b.z.size_bytes() + b.gy.size_bytes() +
             b.gu.size_bytes();
  }
  return total;
}

std::size_t StageModel::parked_bytes() const {
  std::size_t total = 0;
  for (const auto& [mb, layers] : parked_) {
    for (const auto& grads : layers) {
      for (const auto& t : grads) total += t.size_bytes();
    }
  }
  return total;
}

StageModel::MicrobatchState& StageModel::state_of(int microbatch, const char* pass) {
  auto it = live_.find(microbatch);
  if (it == live_.end()) {
    throw ExecError(fmt::format("stage {}: {} of microbatch {} has no saved forward state", stage_,
                                pass, microbatch));
  }
  return it->second;
}

Tensor StageModel::forward(int microbatch, Tensor input, const Tensor& target) {
  if (microbatch < 0 || microbatch >= microbatches_ || live_.count(microbatch) != 0) {
    throw ExecError(fmt::format("stage {}: forward of microbatch {} twice or out of range", stage_,
                                microbatch));
  }
  const int rows = input.rows();
  const int h = config_.hidden;
  const int inner = config_.inner();
  MicrobatchState state;
  Tensor x = std::move(input);
  for (auto& p : params_) {
    BlockSaved saved;
    saved.x = x;
    saved.u = device_.alloc(rows, inner);
    device_.gemm(false, true, 1.0f, x, p[kW1], 0.0f, saved.u);
    device_.add_row_vector(saved.u, p[kB1]);
    saved.z = device_.alloc(rows, inner);
    device_.gelu_forward(saved.u, saved.z);
    Tensor y = device_.alloc(rows, h);
    device_.copy(x, y);  // the residual: y = x + (z W2^T + b2)
    device_.gemm(false, true, 1.0f, saved.z, p[kW2], 1.0f, y);
    device_.add_row_vector(y, p[kB2]);
    state.blocks.push_back(std::move(saved));
    x = std::move(y);
  }
  Tensor output;
  if (is_last()) {
    state.loss_grad = device_.alloc(rows, h);
    losses_[static_cast<std::size_t>(microbatch)] =
        device_.mse_loss_and_grad(x, target, loss_grad_scale_, state.loss_grad);
  } else {
    output = std::move(x);
  }
  saved_bytes_ += bytes_of(state);
  live_.emplace(microbatch, std::move(state));
  return output;
}

Tensor StageModel::backward_input(int microbatch, Tensor grad_output) {
  MicrobatchState& state = state_of(microbatch, "B");
  if (state.offloaded) throw ExecError(fmt::format("stage {}: B of microbatch {} before its L", stage_, microbatch));
  if (state.backward_done) {
    throw ExecError(fmt::format("stage {}: B of microbatch {} twice", stage_, microbatch));
  }
  const std::size_t before = bytes_of(state);
  Tensor g = is_last() ? std::move(state.loss_grad) : std::move(grad_output);
  if (g.empty()) throw ExecError(fmt::format("stage {}: B of microbatch {} without a gradient", stage_, microbatch));
  const int rows = g.rows();
  for (std::size_t j = state.blocks.size(); j-- > 0;) {
    BlockSaved& saved = state.blocks[j];
    auto& p = params_[j];
    Tensor gu = device_.alloc(rows, config_.inner());
    device_.gemm(false, false, 1.0f, g, p[kW2], 0.0f, gu);
    device_.gelu_backward(saved.u, gu);
    saved.u = Tensor();  // B is the last pass that needs the pre-activation
    Tensor gx;
    if (!(is_first() && j == 0)) {
      gx = device_.alloc(rows, config_.hidden);
      device_.copy(g, gx);  // the residual path
      device_.gemm(false, false, 1.0f, gu, p[kW1], 1.0f, gx);
    }
    saved.gy = std::move(g);
    saved.gu = std::move(gu);
    g = std::move(gx);
  }
  state.backward_done = true;
  saved_bytes_ = saved_bytes_ - before + bytes_of(state);
  return g;
}

StageModel::Grads StageModel::compute_contribution(const BlockSaved& saved, bool into_grads, int slot) {
  Grads out;
  if (into_grads) {
    out = grads_[static_cast<std::size_t>(slot)];
  } else {
    for (int p = 0; p < kParamsPerLayer; ++p) {
      const auto [rows, cols] = param_shape(config_, p);
      out[static_cast<std::size_t>(p)] = device_.alloc(rows, cols);
    }
  }
  device_.gemm(true, false, 1.0f, saved.gy, saved.z, 0.0f, out[kW2]);
  device_.column_sums(saved.gy, out[kB2]);
  device_.gemm(true, false, 1.0f, saved.gu, saved.x, 0.0f, out[kW1]);
  device_.column_sums(saved.gu, out[kB1]);
  return out;
}

void StageModel::accumulate(int slot, const Grads& contribution) {
  auto& grads = grads_[static_cast<std::size_t>(slot)];
  for (std::size_t p = 0; p < kParamsPerLayer; ++p) device_.add(grads[p], contribution[p]);
}

void StageModel::backward_weight(int microbatch) {
  MicrobatchState& state = state_of(microbatch, "W");
  if (!state.backward_done) {
    throw ExecError(fmt::format("stage {}: W of microbatch {} before its B", stage_, microbatch));
  }
  const int slots = static_cast<int>(state.blocks.size());
  if (microbatch == next_in_order_) {
    for (int j = 0; j < slots; ++j) {
      const BlockSaved& saved = state.blocks[static_cast<std::size_t>(j)];
      if (microbatch == sum_.first && !sum_.continues) {
        compute_contribution(saved, true, j);  // the first term: straight into the buffers
      } else {
        // Same kernels as the first term, then one add: the order of the sum is fixed.
        device_.gemm(true, false, 1.0f, saved.gy, saved.z, 0.0f, scratch_[kW2]);
        device_.column_sums(saved.gy, scratch_[kB2]);
        device_.gemm(true, false, 1.0f, saved.gu, saved.x, 0.0f, scratch_[kW1]);
        device_.column_sums(saved.gu, scratch_[kB1]);
        accumulate(j, scratch_);
      }
    }
    ++next_in_order_;
    add_parked_in_order();
  } else {
    // Early: park the contribution until every earlier microbatch has been added.
    std::vector<Grads> contribution;
    for (int j = 0; j < slots; ++j) {
      contribution.push_back(compute_contribution(state.blocks[static_cast<std::size_t>(j)], false, j));
    }
    parked_.emplace(microbatch, std::move(contribution));
  }
  saved_bytes_ -= bytes_of(state);
  live_.erase(microbatch);
}

std::vector<Tensor*> StageModel::saved_tensors(MicrobatchState& state) {
  std::vector<Tensor*> tensors;
  for (BlockSaved& b : state.blocks) tensors.insert(tensors.end(), {&b.x, &b.u, &b.z, &b.gy, &b.gu});
  tensors.push_back(&state.loss_grad);
  return tensors;
}

void StageModel::offload(int microbatch) {
  MicrobatchState& state = state_of(microbatch, "O");
  if (state.offloaded) throw ExecError(fmt::format("stage {}: O of microbatch {} twice", stage_, microbatch));
  const std::size_t before = bytes_of(state);
  for (Tensor* tensor : saved_tensors(state)) {
    HostCopy& copy = state.host.emplace_back();
    if (tensor->empty()) continue;
    copy.rows = tensor->rows();
    copy.cols = tensor->cols();
    copy.values = device_.download(*tensor);
    *tensor = Tensor();
  }
  state.offloaded = true;
  saved_bytes_ = saved_bytes_ - before + bytes_of(state);
}

void StageModel::reload(int microbatch) {
  MicrobatchState& state = state_of(microbatch, "L");
  if (!state.offloaded) throw ExecError(fmt::format("stage {}: L of microbatch {} before its O", stage_, microbatch));
  const std::vector<Tensor*> tensors = saved_tensors(state);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    HostCopy& copy = state.host[i];
    if (copy.values.empty()) continue;
    *tensors[i] = device_.alloc(copy.rows, copy.cols);
    device_.upload(*tensors[i], copy.values);
  }
  state.host.clear();
  state.offloaded = false;
  saved_bytes_ += bytes_of(state);
}

void StageModel::add_parked_in_order() {
  const int slots = static_cast<int>(grads_.size());
  for (auto it = parked_.find(next_in_order_); it != parked_.end(); it = parked_.find(next_in_order_)) {
    for (int j = 0; j < slots; ++j) accumulate(j, it->second[static_cast<std::size_t>(j)]);
    parked_.erase(it);
    ++next_in_order_;
  }
}

void StageModel::take_gradients(const std::vector<Tensor>& total) {
  if (total.size() != grads_.size() * kParamsPerLayer) {
    throw ExecError(fmt::format("stage {}: {} gradient tensors for {} layers", stage_, total.size(), grads_.size()));
  }
  for (std::size_t j = 0; j < grads_.size(); ++j) {
    for (std::size_t p = 0; p < kParamsPerLayer; ++p) device_.copy(total[j * kParamsPerLayer + p], grads_[j][p]);
  }
}

void StageModel::continue_sum(const std::vector<Tensor>& partial) {
  if (!sum_.continues || next_in_order_ != kAwaitingPartialSum) {
    throw ExecError(fmt::format("stage {}: a partial gradient sum it does not wait for", stage_));
  }
  take_gradients(partial);
  next_in_order_ = sum_.first;
  add_parked_in_order();
}

double StageModel::loss_sum() const {
  double total = 0;
  for (double loss : losses_) total += loss;
  return total;
}

ModelWeights StageModel::download_weights() {
  ModelWeights weights;
  for (auto& p : params_) {
    std::array<std::vector<float>, kParamsPerLayer> layer;
    for (std::size_t i = 0; i < kParamsPerLayer; ++i) layer[i] = device_.download(p[i]);
    weights.push_back(std::move(layer));
  }
  return weights;
}

std::vector<double> StageModel::gradient_square_sums() {
  std::vector<double> sums;
  for (std::size_t j = grads_.size(); j-- > 0;) {
    for (std::size_t p = kParamsPerLayer; p-- > 0;) sums.push_back(device_.sum_squares(grads_[j][p]));
  }
  return sums;
}

}  // namespace zb::exec
