// The optimizer: SGD with momentum or AdamW, clipping by global norm, a skip for non-finite
// gradients, and the snapshots that let post-validation roll a step back.
#pragma once

#include <array>
#include <string_view>
#include <vector>

#include "exec/runtime/stage_model.h"

namespace zb::exec {

enum class OptimizerKind { sgd, adamw };
OptimizerKind parse_optimizer_kind(std::string_view text);  // throws InputError

struct OptimizerConfig {
  OptimizerKind kind = OptimizerKind::adamw;
  float lr = 1e-3f;
  float momentum = 0.9f;       // sgd
  float beta1 = 0.9f;          // adamw
  float beta2 = 0.999f;        // adamw
  float eps = 1e-8f;           // adamw
  float weight_decay = 0.01f;
  double clip_norm = 1.0;      // clip gradients to this global L2 norm; 0 turns clipping off

  void validate() const;  // throws InputError naming the flag
};

// What a step does once the global squared norm is known.
struct StepDecision {
  bool apply = true;       // false: a gradient is not finite, the step is skipped
  float grad_scale = 1.0f; // clipping coefficient, exactly 1 when no clipping is needed
  double grad_norm = 0;
  bool clipped = false;
};

// Same action and same norm bits (a NaN norm equals a NaN norm: both mean "skip").
bool same_decision(const StepDecision& a, const StepDecision& b);

StepDecision decide_step(double square_sum, const OptimizerConfig& config);

// incoming + sums[0] + sums[1] + ..., left to right: one link of the norm chain.
double chain_square_sum(double incoming, const std::vector<double>& sums);

// Post-validation's local check: may a stage step before the global verdict? Only if its own
// gradients are finite and its own norm does not already exceed the clip threshold; otherwise
// the global decision cannot be a plain step and stepping early would only cost a rollback.
bool may_step_early(const std::vector<double>& sums, const OptimizerConfig& config);

// The optimizer state of one stage (on the stage's device).
class StageOptimizer {
 public:
  StageOptimizer(StageModel& model, const OptimizerConfig& config);

  // Applies the decision to every parameter of the stage (nothing when !decision.apply).
  void apply(const StepDecision& decision);
  int applied_steps() const { return applied_steps_; }

  // Post-validation: copy parameters and state before an early step; put them back bitwise.
  void save_snapshot();
  void restore_snapshot();
  void drop_snapshot();
  bool has_snapshot() const { return has_snapshot_; }

 private:
  using Slots = std::vector<std::array<Tensor, kParamsPerLayer>>;
  Slots make_slots();
  void copy_slots(const Slots& from, Slots& to);

  StageModel& model_;
  OptimizerConfig config_;
  Slots first_moment_;   // sgd: velocity; adamw: exp_avg
  Slots second_moment_;  // adamw: exp_avg_sq
  int applied_steps_ = 0;

  bool has_snapshot_ = false;
  Slots saved_params_, saved_first_, saved_second_;
  int saved_applied_steps_ = 0;
};

}  // namespace zb::exec
