// What a training step of a model-driven problem amounts to (samples, tokens, model flops, static
// memory), and the throughput figures a step time gives: samples per GPU per second, tokens per
// second, MFU and memory per device (docs/design.md section 8).
#pragma once

#include <string_view>
#include <vector>

#include "models/model_setup.h"
#include "models/pipeline_shape.h"

namespace zb::models {

struct StepWork {
  double samples = 0;      // sequences per step over all replicas: m * microbatch_size * dp
  double tokens = 0;       // samples * seq_len
  int gpus = 0;            // p * dp
  double model_flops = 0;  // F + B + W flops of every sample (what the cost model counts; no recomputation)
  double peak_flops_per_gpu = 0;  // dense bf16, the hardware preset's
  std::vector<double> static_GB;  // per device: parameters, gradients and optimizer state
};

// From the setup and the pipeline's shape (p, stages, m).
StepWork step_work(const ModelSetup& setup, const PipelineShape& shape, std::string_view source);

struct Throughput {
  double samples_per_s_per_gpu = 0;
  double tokens_per_s = 0;
  double mfu = 0;  // model flops per step / (step time * gpus * peak flop/s)
};

// For a step of `step_time_s` seconds (0 or less: all zero).
Throughput throughput(const StepWork& work, double step_time_s);

}  // namespace zb::models
