// Samples, tokens and flops of a step, and the throughput of a step time.
#include "models/throughput.h"

#include "models/cost_model.h"
#include "models/detail/layer_costs.h"

namespace zb::models {

StepWork step_work(const ModelSetup& setup, const PipelineShape& shape, std::string_view source) {
  StepWork work;
  const int tensor = setup.parallel.tensor;
  const int replicas = setup.parallel.data;
  work.samples = static_cast<double>(shape.microbatches) * setup.microbatch_size * replicas;
  work.tokens = work.samples * setup.model.seq_len;
  work.gpus = shape.devices * setup.parallel.gpus_per_device();
  const PieceCosts layer = layer_costs(setup);
  const int dense_layers = setup.model.moe_dense_layers;
  const PieceCosts dense_layer = dense_layers > 0 ? layer_costs(dense_layer_setup(setup)) : PieceCosts{};
  const PieceCosts embedding = embedding_costs(setup);
  const PieceCosts output = output_costs(setup);
  const auto total = [](const PieceCosts& piece) { return piece.flops_f + piece.flops_b + piece.flops_w; };
  // Flops are per GPU: a device's t x c GPUs share each pass (recomputation is not model flops).
  const double per_microbatch =
      ((setup.model.layers - dense_layers) * total(layer) + dense_layers * total(dense_layer) + total(embedding) +
       total(output)) *
      tensor * setup.parallel.context;
  work.model_flops = per_microbatch * shape.microbatches * replicas;
  work.peak_flops_per_gpu = setup.hardware.peak_tflops_bf16 * 1e12;
  work.static_GB = stage_costs(setup, shape, source).static_GB;
  return work;
}

Throughput throughput(const StepWork& work, double step_time_s) {
  Throughput result;
  if (!(step_time_s > 0) || work.gpus < 1) return result;
  result.samples_per_s_per_gpu = work.samples / step_time_s / work.gpus;
  result.tokens_per_s = work.tokens / step_time_s;
  result.mfu = work.model_flops / (step_time_s * work.gpus * work.peak_flops_per_gpu);
  return result;
}

}  // namespace zb::models
