// Shared helpers of the CUDA backend tests: skipping without a GPU, small problems and models.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "exec/cuda/detail/cuda_check.h"
#include "exec/runtime/engine.h"
#include "sim/core/problem.h"
#include "sim/core/problem_spec.h"

namespace zb::exec::cuda::test {

// Skips the calling test (reported as skipped) when no CUDA device is usable.
#define ZB_SKIP_WITHOUT_GPU()                                         \
  do {                                                                \
    std::string zb_gpu_why;                                           \
    if (!::zb::exec::cuda::cuda_available(&zb_gpu_why)) {             \
      GTEST_SKIP() << "no usable GPU: " << zb_gpu_why;                \
    }                                                                 \
  } while (false)

inline int gpu_count() {
  int count = 0;
  if (!cuda_available()) return 0;
  cudaGetDeviceCount(&count);
  return count;
}

inline zb::Problem unit_problem(int p, int m, int chunks = 1,
                                zb::Placement placement = zb::Placement::linear) {
  zb::ProblemSpec spec;
  spec.devices = p;
  spec.microbatches = m;
  spec.chunks = chunks;
  spec.placement = placement;
  spec.t_f = {1.0};
  spec.t_b = {1.0};
  spec.t_w = {1.0};
  return spec.build("gpu test");
}

// Small enough for a quick test, large enough that cuBLAS runs real tiled kernels.
inline ExecOptions small_options(int layers, int steps = 3) {
  ExecOptions options;
  options.model.layers = layers;
  options.model.hidden = 64;
  options.model.microbatch_size = 8;
  options.model.seed = 7;
  options.steps = steps;
  options.optimizer.kind = OptimizerKind::adamw;
  options.optimizer.clip_norm = 0;
  return options;
}

}  // namespace zb::exec::cuda::test
