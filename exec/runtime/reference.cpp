// The single-device reference: all layers on one device, microbatches in order, same optimizer.
#include "exec/runtime/reference.h"

#include "exec/runtime/stage_model.h"

namespace zb::exec {

ReferenceResult run_reference(Device& device, const ModelConfig& model,
                              const OptimizerConfig& optimizer, int microbatches, int steps,
                              std::optional<NonfiniteInjection> inject, int stages) {
  model.validate(1);
  StageModel whole(device, model, 0, 1, microbatches);
  StageOptimizer stepper(whole, optimizer);
  ReferenceResult result;
  for (int step = 0; step < steps; ++step) {
    whole.begin_step();
    for (int mb = 0; mb < microbatches; ++mb) {
      Tensor input = device.alloc(model.microbatch_size, model.hidden);
      device.upload(input, synthetic_input(model, step, mb));
      Tensor target = device.alloc(model.microbatch_size, model.hidden);
      device.upload(target, synthetic_target(model, step, mb));
      whole.forward(mb, std::move(input), target);
      whole.backward_input(mb, Tensor());
      whole.backward_weight(mb);
    }
    if (inject && inject->step == step) {
      const int layer = layers_of_stage(inject->stage, stages, model.layers).begin;
      device.poison(whole.grads()[static_cast<std::size_t>(layer)][kW1], 0);
    }
    StepReport report;
    report.decision = decide_step(chain_square_sum(0.0, whole.gradient_square_sums()), optimizer);
    report.loss = whole.loss_sum() / static_cast<double>(microbatches) /
                  static_cast<double>(model.microbatch_size) / static_cast<double>(model.hidden);
    stepper.apply(report.decision);
    result.steps.push_back(report);
  }
  result.weights = whole.download_weights();
  return result;
}

}  // namespace zb::exec
