// The optimizer step between training steps, simulated: the norm all-reduce as messages (stage
// S-1 -> 0, then stage 0's device to every device), the update on each device, N steps.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/simgrid/engine_test_support.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/optimizer_step.h"
#include "sim/simgrid/simgrid_engine.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

constexpr OptimizerStep kModes[] = {{OptimizerMode::sync},
                                    {OptimizerMode::post_validation},
                                    {OptimizerMode::post_validation, true},
                                    {OptimizerMode::post_validation, false, true}};

// On the ideal network every all-reduce hop takes t_reduce_hop and nothing contends, so three
// steps in every mode reproduce the evaluator's: every span of every step and every step end.
TEST(SimgridStepModel, StepsInEveryModeEqualTheEvaluators) {
  const GeneratorRegistry registry = GeneratorRegistry::with_builtins();
  for (const char* name : {"1f1b", "zb-h1", "zb-h2", "zb-v-h", "1f1b-i"}) {
    ProblemSpec spec = testing::uniform_spec(4, 8, 1.0, 1.2, 0.7, 0.3);
    if (std::string(name) == "zb-v-h") spec = testing::v_spec(4, 8, 0.5, 0.6, 0.35, 0.3);
    if (std::string(name) == "1f1b-i") spec.chunks = 2;
    spec.t_f = {1.0, 1.3, 0.9, 1.1};  // per device, unequal: devices finish at different times
    spec.t_opt = {0.8, 0.5, 1.1, 0.6};
    spec.t_reduce_hop = 0.25;
    const Problem problem = spec.build();
    const Schedule schedule = generate(registry, name, problem);
    for (const OptimizerStep& mode : kModes) {
      EvalOptions eval;
      eval.steps = 3;
      eval.optimizer = mode;
      const Trace expected = evaluate(problem, schedule, eval);
      SimgridOptions options;
      options.steps = 3;
      options.optimizer = mode;
      const SimgridResult run = run_simgrid(problem, schedule, options);
      EXPECT_TRUE(testing::same_trace(expected, run.trace))
          << name << " " << optimizer_mode_name(mode.mode) << (mode.rollback ? " rollback" : "")
          << (mode.await_verdict ? " awaiting the verdict" : "");
      // The first step's boundary, device by device.
      std::vector<double> ready(4, 0.0);
      for (const Span& span : expected.spans) {
        if (span.stream == Stream::compute && span.step == 0) ready[span.device] = std::max(ready[span.device], span.end);
      }
      const StepBoundary boundary = step_boundary(problem, ready, mode);
      for (int d = 0; d < 4; ++d) {
        EXPECT_NEAR(run.step.gradients_ready[d], ready[d], 1e-9) << name << " d" << d;
        EXPECT_NEAR(run.step.verdict[d], boundary.verdict[d], 1e-9) << name << " d" << d;
        EXPECT_NEAR(run.step.ready[d], boundary.ready[d], 1e-9) << name << " d" << d;
      }
    }
  }
}

// Data parallelism: each device waits for its stages' gradient all-reduce (optimizer_step.h's
// gradients_ready) before its part of the norm all-reduce, in SimGrid as in the evaluator; the
// reductions (per stage, some longer than the compute after the stage's last W) change the steps.
TEST(SimgridStepModel, TheDataParallelReductionEqualsTheEvaluators) {
  const GeneratorRegistry registry = GeneratorRegistry::with_builtins();
  for (const char* name : {"1f1b", "zb-h2", "1f1b-i", "zb-v-h"}) {
    ProblemSpec spec = testing::uniform_spec(4, 8, 1.0, 1.2, 0.7, 0.3);
    if (std::string(name) == "zb-v-h") spec = testing::v_spec(4, 8, 0.5, 0.6, 0.35, 0.3);
    if (std::string(name) == "1f1b-i") spec.chunks = 2;
    spec.t_opt = {0.5};
    spec.t_reduce_hop = 0.25;
    spec.t_dp_reduce = {3.0, 0.2, 1.5, 6.0};  // per device, split over its chunks
    const Problem problem = spec.build();
    const Schedule schedule = generate(registry, name, problem);
    for (const OptimizerStep& mode : kModes) {
      EvalOptions eval;
      eval.steps = 3;
      eval.optimizer = mode;
      const Trace expected = evaluate(problem, schedule, eval);
      ProblemSpec without = spec;
      without.t_dp_reduce.clear();
      EXPECT_GT(expected.step_ends.back(), evaluate(without.build(), schedule, eval).step_ends.back()) << name;
      SimgridOptions options;
      options.steps = 3;
      options.optimizer = mode;
      const SimgridResult run = run_simgrid(problem, schedule, options);
      EXPECT_TRUE(testing::same_trace(expected, run.trace)) << name << " " << optimizer_mode_name(mode.mode);
      ASSERT_EQ(run.trace.step_ends.size(), expected.step_ends.size());
      for (std::size_t k = 0; k < expected.step_ends.size(); ++k) {
        EXPECT_NEAR(run.trace.step_ends[k], expected.step_ends[k], 1e-9) << name << " step " << k;
      }
    }
  }
}

TEST(SimgridStepModel, OneDeviceHasNothingToWaitFor) {
  ProblemSpec spec = testing::uniform_spec(1, 4, 1.0, 1.0, 1.0, 0.0);
  spec.t_opt = {1.5};
  spec.t_reduce_hop = 7;  // no hop: the device is stage 0's
  const Problem problem = spec.build();
  for (const OptimizerStep& mode : kModes) {
    SimgridOptions options;
    options.steps = 2;
    options.optimizer = mode;
    const SimgridResult run = run_simgrid(problem, generate(GeneratorRegistry::with_builtins(), "zb-h1", problem), options);
    const double step = 12.0 + (mode.rollback ? 3.0 : 1.5);  // a rollback redoes the update
    ASSERT_EQ(run.trace.step_ends.size(), 2U);
    EXPECT_NEAR(run.trace.step_ends[0], step, 1e-12);
    EXPECT_NEAR(run.trace.step_ends[1], 2 * step, 1e-12);
  }
}

// A cluster where nothing contends: GPipe sends one direction at a time, and its all-reduce
// messages are delivered before the next step's first activation leaves. The network then takes
// latency + bytes / bandwidth per message, and the evaluator with those times agrees in every mode.
TEST(SimgridStepModel, OnAContentionFreeClusterTheEvaluatorAgrees) {
  ProblemSpec spec = testing::uniform_spec(4, 6, 1.0, 1.0, 1.0);
  spec.bytes_act = 1e6;
  spec.t_opt = {0.5};
  ClusterSpec cluster;
  cluster.nodes = 4;
  cluster.gpus_per_node = 1;
  cluster.gpu_tflops = 100;
  cluster.intra_node = {1000, 0};
  cluster.inter_node = {10, 200};  // 10 GB/s, 0.2 ms
  spec.t_comm = {0.2 + 1e6 / 10e9 * 1e3};
  spec.t_reduce_hop = 0.2 + kGradNormBytes / 10e9 * 1e3;
  const Problem problem = spec.build();
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "gpipe", problem);
  for (const OptimizerStep& mode : kModes) {
    EvalOptions eval;
    eval.steps = 3;
    eval.optimizer = mode;
    const Trace expected = evaluate(problem, schedule, eval);
    SimgridOptions options;
    options.cluster = cluster;
    options.steps = 3;
    options.optimizer = mode;
    const SimgridResult run = run_simgrid(problem, schedule, options);
    // Stage 0's device sends its three verdicts at once through its NIC: 16 bytes more each.
    EXPECT_TRUE(testing::same_trace(expected, run.trace, 1e-7)) << optimizer_mode_name(mode.mode);
  }
}

// On a cluster the all-reduce crosses the real links: in ZB-H1 device 0 (stage 0) finishes last,
// so the synchronous step waits for one verdict hop after the chain reaches it.
TEST(SimgridStepModel, OnAClusterTheSyncStepPaysTheVerdictHop) {
  ProblemSpec spec = testing::uniform_spec(4, 8, 1.0, 1.0, 1.0);
  spec.bytes_act = 1e6;
  const Problem problem = spec.build();
  ClusterSpec cluster;
  cluster.nodes = 4;
  cluster.gpus_per_node = 1;
  cluster.gpu_tflops = 100;
  cluster.intra_node = {1000, 0};
  cluster.inter_node = {10, 200};  // 0.2 ms latency dominates the 8-byte messages
  SimgridOptions options;
  options.cluster = cluster;
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "zb-h1", problem);
  const SimgridResult sync = run_simgrid(problem, schedule, options);
  options.optimizer.mode = OptimizerMode::post_validation;
  const SimgridResult post_validation = run_simgrid(problem, schedule, options);
  const double last = *std::max_element(sync.step.gradients_ready.begin(), sync.step.gradients_ready.end());
  EXPECT_NEAR(sync.step.gradients_ready[0], last, 1e-9);
  EXPECT_NEAR(sync.trace.step_ends[0] - post_validation.trace.step_ends[0], 0.2 + 3 * 8 / 10e9 * 1e3, 1e-6);
}

}  // namespace
}  // namespace zb
