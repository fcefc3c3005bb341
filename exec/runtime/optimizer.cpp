// The optimizer: SGD with momentum or AdamW, clipping by global norm, a skip for non-finite
// gradients, and the snapshots that let post-validation roll a step back.
#include "exec/runtime/optimizer.h"

#include <fmt/format.h>

#include <cmath>

#include "exec/runtime/exec_error.h"
#include "sim/support/error.h"

namespace zb::exec {

OptimizerKind parse_optimizer_kind(std::string_view text) {
  if (text == "sgd") return OptimizerKind::sgd;
  if (text == "adamw") return OptimizerKind::adamw;
  throw InputError(fmt::format("--optimizer '{}': expected adamw or sgd", text));
}

void OptimizerConfig::validate() const {
  if (!(lr > 0) || !std::isfinite(lr)) throw InputError(fmt::format("--lr {}: need a finite number > 0", lr));
  if (!(clip_norm >= 0) || !std::isfinite(clip_norm)) {
    throw InputError(fmt::format("--clip {}: need a finite number >= 0 (0: off)", clip_norm));
  }
  if (!(momentum >= 0 && momentum < 1)) throw InputError(fmt::format("--momentum {}: need 0 <= x < 1", momentum));
  if (!(weight_decay >= 0) || !std::isfinite(weight_decay)) {
    throw InputError(fmt::format("--weight-decay {}: need a finite number >= 0", weight_decay));
  }
}

StepDecision decide_step(double square_sum, const OptimizerConfig& config) {
  StepDecision decision;
  decision.grad_norm = std::sqrt(square_sum);
  if (!std::isfinite(square_sum)) {
    decision.apply = false;
    return decision;
  }
  if (config.clip_norm > 0 && decision.grad_norm > config.clip_norm) {
    decision.clipped = true;
    decision.grad_scale = static_cast<float>(config.clip_norm / (decision.grad_norm + 1e-6));
  }
  return decision;
}

bool same_decision(const StepDecision& a, const StepDecision& b) {
  const bool norms_equal = (std::isnan(a.grad_norm) && std::isnan(b.grad_norm)) || a.grad_norm == b.grad_norm;
  return a.apply == b.apply && a.grad_scale == b.grad_scale && a.clipped == b.clipped && norms_equal;
}

double chain_square_sum(double incoming, const std::vector<double>& sums) {
  double total = incoming;
  for (double s : sums) total += s;
  return total;
}

bool may_step_early(const std::vector<double>& sums, const OptimizerConfig& config) {
  const double own = chain_square_sum(0.0, sums);
  if (!std::isfinite(own)) return false;
  return config.clip_norm <= 0 || std::sqrt(own) <= config.clip_norm;
}

StageOptimizer::StageOptimizer(StageModel& model, const OptimizerConfig& config)
    : model_(model), config_(config) {
  first_moment_ = make_slots();
  if (config_.kind == OptimizerKind::adamw) second_moment_ = make_slots();
}

StageOptimizer::Slots StageOptimizer::make_slots() {
  Slots slots;
  for (auto& layer : model_.params()) {
    std::array<Tensor, kParamsPerLayer> row;
    for (std::size_t p = 0; p < kParamsPerLayer; ++p) {
      row[p] = model_.device().alloc(layer[p].rows(), layer[p].cols());
    }
    slots.push_back(std::move(row));
  }
  return slots;
}

void StageOptimizer::copy_slots(const Slots& from, Slots& to) {
  for (std::size_t j = 0; j < from.size(); ++j) {
    for (std::size_t p = 0; p < kParamsPerLayer; ++p) model_.device().copy(from[j][p], to[j][p]);
  }
}

void StageOptimizer::apply(const StepDecision& decision) {
  if (!decision.apply) return;
  ++applied_steps_;
  auto& params = model_.params();
  auto& grads = model_.grads();
  Device& device = model_.device();
  for (std::size_t j = 0; j < params.size(); ++j) {
    for (std::size_t p = 0; p < kParamsPerLayer; ++p) {
      if (config_.kind == OptimizerKind::sgd) {
        device.sgd_update(params[j][p], grads[j][p], first_moment_[j][p],
                          SgdUpdate{config_.lr, config_.momentum, config_.weight_decay,
                                    decision.grad_scale});
      } else {
        device.adamw_update(params[j][p], grads[j][p], first_moment_[j][p], second_moment_[j][p],
                            AdamWUpdate{config_.lr, config_.beta1, config_.beta2, config_.eps,
                                        config_.weight_decay, decision.grad_scale,
                                        applied_steps_});
      }
    }
  }
}

void StageOptimizer::save_snapshot() {
  if (saved_params_.empty()) {
    saved_params_ = make_slots();
    saved_first_ = make_slots();
    if (config_.kind == OptimizerKind::adamw) saved_second_ = make_slots();
  }
  copy_slots(model_.params(), saved_params_);
  copy_slots(first_moment_, saved_first_);
  if (config_.kind == OptimizerKind::adamw) copy_slots(second_moment_, saved_second_);
  saved_applied_steps_ = applied_steps_;
  has_snapshot_ = true;
}

void StageOptimizer::restore_snapshot() {
  if (!has_snapshot_) throw ExecError(fmt::format("stage {}: rollback without a snapshot", model_.stage()));
  copy_slots(saved_params_, model_.params());
  copy_slots(saved_first_, first_moment_);
  if (config_.kind == OptimizerKind::adamw) copy_slots(saved_second_, second_moment_);
  applied_steps_ = saved_applied_steps_;
  has_snapshot_ = false;
}

void StageOptimizer::drop_snapshot() { has_snapshot_ = false; }

}  // namespace zb::exec
