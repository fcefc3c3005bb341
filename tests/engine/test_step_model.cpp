// The optimizer step: a grad-norm reduction 0 -> p-1 and back, with and without a barrier.
#include <gtest/gtest.h>

#include <algorithm>

#include "tests/engine/engine_test_support.h"
#include "sim/schedule/evaluator.h"
#include "sim/schedule/generator_registry.h"
#include "sim/engine/simgrid_engine.h"
#include "tests/support/problems.h"

namespace zb {
namespace {

// Under the ideal network every hop takes t_comm, so the step times follow from the
// evaluator's per-device end times: r_0 = g_0, r_d = max(g_d, r_(d-1) + t_comm); the result
// comes back c_(p-1) = r_(p-1), c_d = c_(d+1) + t_comm.
TEST(SimgridStepModel, BarrierAndPostValidationFollowTheReductionChain) {
  const double t_comm = 0.5;
  const double t_opt = 2.0;
  for (const char* name : {"1f1b", "zb-h1", "zb-h2"}) {
    const Problem problem = testing::uniform_problem(4, 8, 1.0, 1.2, 0.7, t_comm);
    const Schedule schedule = generate(GeneratorRegistry::with_builtins(), name, problem);
    const Trace expected = evaluate(problem, schedule);
    std::vector<double> ready(4, 0.0);
    for (const Span& span : expected.spans) {
      if (span.stream == Stream::compute) ready[span.device] = std::max(ready[span.device], span.end);
    }
    std::vector<double> reduced(4), result(4);
    reduced[0] = ready[0];
    for (int d = 1; d < 4; ++d) reduced[d] = std::max(ready[d], reduced[d - 1] + t_comm);
    result[3] = reduced[3];
    for (int d = 2; d >= 0; --d) result[d] = result[d + 1] + t_comm;

    SimgridOptions options;
    options.optimizer_step_time = t_opt;
    const SimgridResult run = run_simgrid(problem, schedule, options);
    for (int d = 0; d < 4; ++d) {
      EXPECT_NEAR(run.step.gradients_ready[d], ready[d], 1e-9) << name << " d" << d;
      EXPECT_NEAR(run.step.check_received[d], result[d], 1e-9) << name << " d" << d;
    }
    const double last_ready = *std::max_element(ready.begin(), ready.end());
    const double last_result = *std::max_element(result.begin(), result.end());
    EXPECT_NEAR(run.step.post_validation, last_ready + t_opt, 1e-9) << name;
    EXPECT_NEAR(run.step.barrier, last_result + t_opt, 1e-9) << name;
    EXPECT_NEAR(run.step.validation_end, last_result, 1e-9) << name;
    // The barrier costs at least the way back from the last device to device 0.
    EXPECT_GE(run.step.barrier, run.step.post_validation + 3 * t_comm - 1e-9) << name;
  }
}

TEST(SimgridStepModel, OneDeviceHasNothingToWaitFor) {
  const Problem problem = testing::uniform_problem(1, 4, 1.0, 1.0, 1.0, 0.0);
  SimgridOptions options;
  options.optimizer_step_time = 1.5;
  const SimgridResult run = run_simgrid(problem, generate(GeneratorRegistry::with_builtins(), "zb-h1", problem), options);
  EXPECT_NEAR(run.step.post_validation, 12.0 + 1.5, 1e-12);
  EXPECT_NEAR(run.step.barrier, 12.0 + 1.5, 1e-12);
}

// On a cluster the reduction's messages cross the real links: the barrier pays the network
// latency 2(p-1) times.
TEST(SimgridStepModel, OnAClusterTheBarrierPaysTheNetworkLatency) {
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
  const SimgridResult run = run_simgrid(problem, generate(GeneratorRegistry::with_builtins(), "zb-h1", problem), options);
  // Device 0 finishes last in ZB-H1; the check then travels 3 hops up and 3 back.
  EXPECT_NEAR(run.step.barrier - run.step.post_validation, 6 * (0.2 + 8 / 10e9 * 1e3), 1e-6);
}

}  // namespace
}  // namespace zb
