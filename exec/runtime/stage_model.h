// One stage of the model on one device: its blocks' F, B and W, saved tensors and gradients.
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <vector>

#include "exec/runtime/device.h"
#include "exec/runtime/model_config.h"

namespace zb::exec {

// What one block keeps between passes for one microbatch. F saves x, u and z; B frees u and adds
// gy and gu; W reads x, z, gy, gu and frees everything (the F/B/W memory model of docs/design.md section 3).
struct BlockSaved {
  Tensor x;   // block input [B x h]
  Tensor u;   // pre-activation [B x 4h], needed by B only
  Tensor z;   // gelu(u) [B x 4h], needed by W (dW2)
  Tensor gy;  // dL/dy [B x h], from B, needed by W (dW2, db2)
  Tensor gu;  // dL/du [B x 4h], from B, needed by W (dW1, db1)
};

// Which microbatches run through a stage and where its gradient sum starts: all of them from
// microbatch 0 (one model), or under the bidirectional placement one copy's half, the up copy's
// sum continuing the down copy's partial sum (continue_sum), so that the two copies end with the
// in-order sum of the single-device reference.
struct GradientSum {
  int first = 0;           // the first microbatch through the stage
  int end = -1;            // one past the last; -1: all of them
  bool continues = false;  // the sum starts from another copy's partial sum, not from `first`
};

class StageModel {
 public:
  // `stage` of `stages` picks the layers (a copy's slice under the bidirectional placement).
  StageModel(Device& device, const ModelConfig& config, int stage, int stages, int microbatches,
             GradientSum sum = {});

  int stage() const { return stage_; }
  LayerRange layers() const { return layers_; }
  bool is_first() const { return stage_ == 0; }
  bool is_last() const { return stage_ == stages_ - 1; }
  Device& device() { return device_; }

  // Clears per-step state (losses, gradient order); saved tensors must already be gone.
  void begin_step();

  // F. `input` is the stage input [B x h] (kept as the first block's x). On the last stage
  // `target` gives the loss, whose gradient is kept for B; returns the output otherwise.
  Tensor forward(int microbatch, Tensor input, const Tensor& target);
  // B. `grad_output` is dL/d(output) (ignored on the last stage, which uses the loss gradient).
  // Returns dL/d(input), or nothing on stage 0 (no one needs it).
  Tensor backward_input(int microbatch, Tensor grad_output);
  // W. Weight gradients, accumulated into the gradient buffers in microbatch order whatever order
  // the schedule runs W in, so the sums are bitwise those of the in-order reference.
  void backward_weight(int microbatch);
  // O: the microbatch's saved tensors go to host memory (downloaded, then freed on the device);
  // L: they come back to fresh device tensors. A copy both ways, so what B and W compute from
  // them is bitwise what they would without the trip.
  void offload(int microbatch);
  void reload(int microbatch);

  // Live activation bytes of this stage (saved tensors of all microbatches in flight).
  std::size_t saved_bytes() const { return saved_bytes_; }
  // Gradient contributions parked because their microbatch ran W early (not activation memory).
  std::size_t parked_bytes() const;
  bool gradients_complete() const { return next_in_order_ == end_; }
  // The up copy: the gradient buffers become `partial` (per layer, per parameter: the down copy's
  // in-order sum up to `first`), then its own contributions are added in microbatch order.
  void continue_sum(const std::vector<Tensor>& partial);
  // The down copy: the gradient buffers become the total the up copy finished.
  void take_gradients(const std::vector<Tensor>& total);
  // Sum over microbatches, in order, of sum 0.5 (y - target)^2 (last stage; 0 elsewhere).
  double loss_sum() const;
  // Each microbatch's 0.5 (y - target)^2 (last stage; 0 for microbatches that did not run here).
  const std::vector<double>& losses() const { return losses_; }

  // Parameters, gradients: [layer - layers().begin][param].
  std::vector<std::array<Tensor, kParamsPerLayer>>& params() { return params_; }
  std::vector<std::array<Tensor, kParamsPerLayer>>& grads() { return grads_; }
  // Host copies of this stage's weights, in layer order.
  ModelWeights download_weights();

  // The stage's per-tensor squared gradient sums in the canonical norm order: layers from last
  // to first, parameters from b2 back to W1. Chaining these across stages from the last stage to
  // the first gives the same double-precision sum whatever the partition.
  std::vector<double> gradient_square_sums();

 private:
  using Grads = std::array<Tensor, kParamsPerLayer>;
  // A saved tensor while it lives in host memory.
  struct HostCopy {
    int rows = 0;
    int cols = 0;
    std::vector<float> values;
  };
  struct MicrobatchState {
    std::vector<BlockSaved> blocks;
    Tensor loss_grad;  // last stage: dL/dy of the last block, from F
    bool backward_done = false;
    std::vector<HostCopy> host;  // offloaded: every saved tensor, in saved_tensors' order
    bool offloaded = false;
  };
  // The state's saved tensors in one fixed order (empty ones included).
  static std::vector<Tensor*> saved_tensors(MicrobatchState& state);

  std::size_t bytes_of(const MicrobatchState& state) const;
  MicrobatchState& state_of(int microbatch, const char* pass);
  void accumulate(int slot, const Grads& contribution);
  // Adds the parked contributions that are next in microbatch order.
  void add_parked_in_order();
  Grads compute_contribution(const BlockSaved& saved, bool into_grads, int slot);

  Device& device_;
  ModelConfig config_;
  int stage_;
  int stages_;
  int microbatches_;
  GradientSum sum_;
  int end_;  // one past the last microbatch through the stage
  LayerRange layers_;
  float loss_grad_scale_;
  std::vector<Grads> params_;
  std::vector<Grads> grads_;
  Grads scratch_;  // an in-order contribution before it is added (shapes equal for every layer)
  std::map<int, MicrobatchState> live_;
  std::map<int, std::vector<Grads>> parked_;  // microbatch -> per-layer contributions
  std::vector<double> losses_;
  int next_in_order_ = 0;
  std::size_t saved_bytes_ = 0;
};

}  // namespace zb::exec
