// Shared helpers of the executor tests: small problems, small models, runs against the reference.
#include "tests/exec/exec_test_support.h"

#include <unistd.h>

#include <filesystem>

#include "sim/app/catalog/generators.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/problem_spec.h"
#include "tests/testing/problems.h"

namespace zb::exec::test {

zb::Problem unit_problem(int p, int m, int chunks, zb::Placement placement) {
  zb::ProblemSpec spec = zb::testing::uniform_spec(p, m, 1, 1, 1, 0, chunks);
  spec.placement = placement;
  spec.t_offload = {0.5};  // so that the schedules that offload (po-h, po-f) can be made
  return spec.build("test");
}

ExecOptions small_options(int layers, int steps) {
  ExecOptions options;
  options.model.layers = layers;
  options.model.hidden = 16;
  options.model.microbatch_size = 3;
  options.model.seed = 7;
  options.steps = steps;
  options.optimizer.kind = OptimizerKind::adamw;
  options.optimizer.clip_norm = 0;
  return options;
}

zb::Schedule make(const std::string& generator, const zb::Problem& problem) {
  return zb::generate(zb::catalog::generators(), generator, problem);
}

ReferenceResult reference_for(const ExecOptions& options, const zb::Problem& problem) {
  CpuDevice device(0, CpuDevice::Clock::now());
  return run_reference(device, options.model, options.optimizer, problem.microbatches,
                       options.steps, options.inject_nonfinite, problem.stages());
}

}  // namespace zb::exec::test
