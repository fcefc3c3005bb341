// The engine plan: channels across device boundaries, inputs, and structural errors.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include "sim/simgrid/detail/engine_plan.h"
#include "sim/simgrid/simgrid_engine.h"
#include "sim/core/evaluator.h"
#include "tests/simgrid/engine_test_support.h"
#include "sim/support/error.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/schedule.h"

namespace zb::engine {
namespace {

using ::testing::HasSubstr;

TEST(EnginePlan, LinearPipelineHasAForwardAndABackwardChannelPerBoundary) {
  const Problem problem = testing::uniform_problem(4, 4, 1, 1, 1, 0.5);
  const EnginePlan plan = make_engine_plan(problem, generate(GeneratorRegistry::with_builtins(), "zb-h1", problem));
  ASSERT_EQ(plan.channels.size(), 6U);
  EXPECT_EQ(plan.channels[0].producer, 0);
  EXPECT_EQ(plan.channels[0].consumer, 1);
  EXPECT_TRUE(plan.channels[1].backward);
  EXPECT_EQ(plan.channels[1].producer, 1);
  EXPECT_EQ(plan.channels[1].consumer, 0);
  EXPECT_EQ(plan.action_count, 4U * 4U * 3U);
  // d0's first action is F0 of stage 0 (no input) and sends on channel 0.
  EXPECT_EQ(plan.devices[0][0].input, InputKind::none);
  EXPECT_EQ(plan.devices[0][0].output_channel, 0);
  // Every W waits only for its own B, earlier on the same device.
  for (const auto& device : plan.devices) {
    for (const PlannedAction& item : device) {
      if (item.action.pass == Pass::W) {
        EXPECT_EQ(item.input, InputKind::local);
      }
    }
  }
}

TEST(EnginePlan, VShapeTurnsAroundInsideTheLastDevice) {
  ProblemSpec spec;
  spec.devices = 2;
  spec.microbatches = 2;
  spec.chunks = 2;
  spec.placement = Placement::vshape;
  spec.t_f = {1};
  spec.t_b = {1};
  spec.t_w = {1};
  const Problem problem = spec.build();
  // Stages 0,3 on d0 and 1,2 on d1: boundary 1->2 stays inside d1.
  const Schedule schedule = parse_schedule_text(
      "d0: F0 F1 F0.1 F1.1 B0.1 W0.1 B1.1 W1.1 B0 W0 B1 W1\n"
      "d1: F0 F0.1 F1 F1.1 B0.1 W0.1 B0 W0 B1.1 W1.1 B1 W1\n",
      "v");
  const EnginePlan plan = make_engine_plan(problem, schedule);
  EXPECT_EQ(plan.channels.size(), 4U);  // boundaries 0->1 and 2->3, both directions
  // d1's F0.1 (stage 2) takes stage 1's output locally.
  EXPECT_EQ(plan.devices[1][1].input, InputKind::local);
  // d0's B0.1 (stage 3, the last) needs only its own F.
  EXPECT_EQ(plan.devices[0][4].input, InputKind::local);
}

TEST(EnginePlan, BidirectionalCopiesStartAtTheirOwnEndsAndShareNoChannel) {
  ProblemSpec spec = testing::uniform_spec(2, 4, 1, 1, 1, 0.5, 2);
  spec.placement = Placement::bidirectional;
  const Problem problem = spec.build();
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "dualpipe", problem);
  const EnginePlan plan = make_engine_plan(problem, schedule);
  // Boundaries 0->1 (down copy) and 2->3 (up copy), both directions; none between the copies.
  ASSERT_EQ(plan.channels.size(), 4U);
  for (const auto& channel : plan.channels) EXPECT_NE(channel.boundary, 1);
  // Microbatch 2 runs up: d1's first action F2.1 is stage 2, the up copy's first (no input), and
  // d0's F2.1 (stage 3) takes it from d1; d0's F0 (stage 0) has no input either.
  EXPECT_EQ(to_token(plan.devices[1][0].action), "F2.1");
  EXPECT_EQ(plan.devices[1][0].input, InputKind::none);
  EXPECT_EQ(to_token(plan.devices[0][1].action), "F2.1");
  EXPECT_EQ(plan.devices[0][1].input, InputKind::channel);
  EXPECT_EQ(plan.devices[1][0].output_channel, plan.devices[0][1].input_channel);
  EXPECT_EQ(plan.devices[0][0].input, InputKind::none);
  // The engine times it as the evaluator does (t_comm 0.5 on every crossing).
  EXPECT_TRUE(testing::same_trace(evaluate(problem, schedule), simulate_simgrid(problem, schedule, {})));
}

TEST(EnginePlan, ActionsOutsideTheProblemAndDuplicatesAreErrors) {
  const Problem problem = testing::uniform_problem(2, 2, 1, 1, 1);
  try {
    make_engine_plan(problem, parse_schedule_text("d0: F0 F5 BW0 BW1\nd1: F0 F1 BW0 BW1\n", "bad"));
    FAIL();
  } catch (const ScheduleError& error) {
    EXPECT_THAT(error.what(), HasSubstr("d0 step 1: action F5 is outside the problem"));
  }
  try {
    make_engine_plan(problem, parse_schedule_text("d0: F0 F1 BW0 BW1\nd1: F0 F1 BW0 BW0 BW1\n", "dup"));
    FAIL();
  } catch (const ScheduleError& error) {
    EXPECT_THAT(error.what(), HasSubstr("d1 step 3: BW0 of stage 1 is already scheduled at d1 step 2"));
  }
  EXPECT_THROW(make_engine_plan(problem, parse_schedule_text("d0: F0\n", "short")), ScheduleError);
}

TEST(EnginePlan, AnInputProducedLaterOnTheSameDeviceIsPlannedAsStuck) {
  const Problem problem = testing::uniform_problem(2, 1, 1, 1, 1);
  const EnginePlan plan = make_engine_plan(problem, parse_schedule_text("d0: F0 B0 W0\nd1: W0 F0 B0\n", "late"));
  EXPECT_EQ(plan.devices[1][0].input, InputKind::never);
}

}  // namespace
}  // namespace zb::engine
