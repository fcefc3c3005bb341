// Per-link transfer lists under every placement, and the data-parallel gradient all-reduce
// between steps (optimizer_step.h's gradients_ready) in the evaluator.
#include <gtest/gtest.h>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/optimizer_step.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

// t_comm of p values names the links d -> d+1 (the last: p-1 -> 0). Interleaved: every boundary
// takes its devices' link, the wrap-around 3 -> 0 included. V: the way down, the turn on device 3
// (free), the way back over the same links; stage 7 -> stage 0 stays on device 0.
TEST(PerLinkTransfers, EveryPlacementTakesItsBoundariesLinks) {
  ProblemSpec spec = testing::uniform_spec(4, 8);
  spec.t_comm = {1, 2, 3, 4};
  EXPECT_TRUE(spec.chunk_independent());
  EXPECT_EQ(spec.build().t_comm, (std::vector<double>{1, 2, 3, 4}));  // v = 1: the per-stage list
  const Problem interleaved = spec.with_chunks(2).build();
  EXPECT_EQ(interleaved.t_comm, (std::vector<double>{1, 2, 3, 4, 1, 2, 3, 4}));
  ProblemSpec v = spec.with_chunks(2);
  v.placement = Placement::vshape;
  const Problem vshape = v.build();
  EXPECT_EQ(vshape.t_comm, (std::vector<double>{1, 2, 3, 0, 3, 2, 1, 0}));
  EXPECT_DOUBLE_EQ(vshape.comm_after(4), 3);  // d3 -> d2
  // A list of p * v values is per stage and does not survive another v.
  ProblemSpec per_stage = spec.with_chunks(2);
  per_stage.t_comm = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(per_stage.build().t_comm, per_stage.t_comm);
  EXPECT_FALSE(per_stage.chunk_independent());
  per_stage.t_comm = {1, 2, 3};
  try {
    per_stage.build("s.json");
    FAIL() << "a list of 3 values for p = 4 was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'t_comm' has 3 values: expected one, 4 (per link"), std::string::npos)
        << e.what();
  }
}

// A per-link list under a placement that does not allow the chunk count is refused before any
// stage is mapped to a device (the fuzzer found vshape with 3 chunks reading links[-1]).
TEST(PerLinkTransfers, APlacementsChunkRuleIsCheckedBeforeLinksAreMapped) {
  ProblemSpec spec = testing::uniform_spec(1, 8).with_chunks(3);
  spec.t_comm = {0.5};
  spec.placement = Placement::vshape;
  try {
    spec.build("s.txt");
    FAIL() << "vshape with 3 chunks was accepted";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "s.txt: placement 'vshape' needs chunks = 2, got 3");
  }
}

// The interleaved generator runs on a per-link list and waits for the slow link: the evaluator
// charges each boundary its own link.
TEST(PerLinkTransfers, InterleavedRunsOnAPerLinkList) {
  ProblemSpec spec = testing::uniform_spec(4, 8, 2, 2, 2);
  spec.t_comm = {0.1, 0.1, 0.1, 0.1};
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "1f1b-i", spec.with_chunks(2).build());
  const double uniform = evaluate(spec.with_chunks(2).build(), schedule).metrics.makespan;
  spec.t_comm = {0.1, 0.1, 0.1, 5};  // the wrap-around link is slow
  const double slow_wrap = evaluate(spec.with_chunks(2).build(), schedule).metrics.makespan;
  EXPECT_GT(slow_wrap, uniform + 4.9);
}

Trace run(const Problem& problem, const Schedule& schedule, OptimizerMode mode) {
  EvalOptions options;
  options.steps = 3;
  options.optimizer = {mode};
  return evaluate(problem, schedule, options);
}

// p = 4, m = 8, unit costs, t_opt 2, hop 0.5: ZB-H2 keeps device d busy from d to 24 + d and ends
// every device on a W of 1 (starting at 23 + d). Sync period 30.5, post-validation 26
// (test_steady_state.cpp). A data-parallel reduction that fits under that last W (0.5) is hidden;
// one of 3 ends at 26 + d, 2 after the last action, and both periods grow by those 2.
TEST(DataParallel, TheReductionHidesUnderTheLastWeightGradientOrDelaysTheStep) {
  ProblemSpec spec = testing::uniform_spec(4, 8);
  spec.t_opt = {2};
  spec.t_reduce_hop = 0.5;
  const Problem plain = spec.build();
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "zb-h2", plain);
  for (int d = 0; d < 4; ++d) ASSERT_EQ(schedule.devices[d].back().pass, Pass::W);
  spec.t_dp_reduce = {0.5};
  const Problem hidden = spec.build();
  EXPECT_DOUBLE_EQ(steady_step_time(run(hidden, schedule, OptimizerMode::sync).step_ends), 30.5);
  EXPECT_DOUBLE_EQ(steady_step_time(run(hidden, schedule, OptimizerMode::post_validation).step_ends), 26);
  spec.t_dp_reduce = {3};
  const Problem exposed = spec.build();
  EXPECT_DOUBLE_EQ(steady_step_time(run(exposed, schedule, OptimizerMode::sync).step_ends), 32.5);
  EXPECT_DOUBLE_EQ(steady_step_time(run(exposed, schedule, OptimizerMode::post_validation).step_ends), 28);
  // The metrics (the first step's compute) do not change.
  EXPECT_DOUBLE_EQ(run(exposed, schedule, OptimizerMode::sync).metrics.makespan,
                   run(plain, schedule, OptimizerMode::sync).metrics.makespan);
}

// Two chunks on a device: their reductions share the device's stream, in the order their last
// weight-gradient passes start; a stage whose last W starts early hides its reduction.
TEST(DataParallel, ADevicesStagesReduceOneAfterAnother) {
  ProblemSpec spec = testing::uniform_spec(2, 4, 1, 1, 1, 0, 2);
  spec.t_dp_reduce = {2, 2, 4, 2};  // per stage: stage s of 4 (interleaved: d0 holds 0 and 2)
  const Problem problem = spec.build();
  // d0: stage 2's last W starts at 10, stage 0's at 12; the stream runs 10..14 (stage 2), 14..16.
  std::vector<double> starts{12, 0, 10, 0};
  EXPECT_DOUBLE_EQ(gradients_ready(problem, 0, 13, starts), 16);
  EXPECT_DOUBLE_EQ(gradients_ready(problem, 0, 17, starts), 17);  // hidden under later compute
  starts = {1, 0, 10, 0};  // stage 0 first: 1..3, then stage 2: 10..14
  EXPECT_DOUBLE_EQ(gradients_ready(problem, 0, 13, starts), 14);
  spec.t_dp_reduce.clear();
  EXPECT_DOUBLE_EQ(gradients_ready(spec.build(), 0, 13, starts), 13);
  spec.t_dp_reduce = {1, -1};
  EXPECT_THROW(spec.build(), InputError);
}

// Frameworks that reduce after the whole pipeline (dp_reduce_overlap 0) add every stage's
// reduction after the device's last action; a share f runs beside the compute as before, the rest
// waits.
TEST(DataParallel, AReductionThatDoesNotOverlapFollowsTheLastAction) {
  ProblemSpec spec = testing::uniform_spec(2, 4, 1, 1, 1, 0, 2);
  spec.t_dp_reduce = {2, 2, 4, 2};
  const std::vector<double> starts{12, 0, 10, 0};
  spec.dp_reduce_overlap = 0;
  EXPECT_DOUBLE_EQ(gradients_ready(spec.build(), 0, 17, starts), 17 + 2 + 4);
  spec.dp_reduce_overlap = 0.5;  // beside the compute: 10..12, then 12..13; after 17: 3
  EXPECT_DOUBLE_EQ(gradients_ready(spec.build(), 0, 17, starts), 17 + 3);
  EXPECT_DOUBLE_EQ(gradients_ready(spec.build(), 0, 11, starts), 13 + 3);
  spec.dp_reduce_overlap = 1.5;
  EXPECT_THROW(spec.build(), InputError);
}

}  // namespace
}  // namespace zb
