// split_1f1b, zb-auto's fallback: 1F1B's order with each W right after its B, in-flight forwards
// capped where B allocates memory (recomputation), and what zb-auto makes of it.
#include <gtest/gtest.h>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generators.h"
#include "sim/core/memory.h"
#include "sim/core/problem_spec.h"
#include "sim/core/validator.h"
#include "sim/solver/detail/greedy_schedule.h"
#include "sim/solver/detail/split_1f1b.h"

namespace zb {
namespace {

// Unit costs, p = 4, m = 8, memory as with full recomputation: F keeps 1 (the layer input), B
// recomputes and allocates 2 more, W frees all 3.
Problem recomputed(double limit) {
  ProblemSpec spec;
  spec.devices = 4;
  spec.microbatches = 8;
  spec.t_f = {1};
  spec.t_b = {1};
  spec.t_w = {1};
  spec.t_comm = {0};
  spec.mem_f = {1};
  spec.mem_b = {2};
  spec.mem_w = {-3};
  spec.mem_limit = MemoryLimit{limit, false};
  return spec.build("recomputed");
}

TEST(Split1f1b, WithRoomItIs1f1bWithEachBackwardSplitInPlace) {
  const Problem problem = recomputed(6);  // 1F1B's 4 forwards on d0 plus one B's 2
  const auto result = split_1f1b(problem, 6);
  ASSERT_TRUE(result);
  EXPECT_DOUBLE_EQ(result->accepted_level, 6);
  Schedule expected = make_1f1b(problem);
  for (auto& list : expected.devices) {
    std::vector<Action> split;
    for (const Action& a : list) {
      if (a.pass != Pass::BW) {
        split.push_back(a);
        continue;
      }
      split.push_back({Pass::B, a.microbatch, 0});
      split.push_back({Pass::W, a.microbatch, 0});
    }
    list = split;
  }
  EXPECT_EQ(to_text(result->schedule), to_text(expected));
}

TEST(Split1f1b, ATightLimitKeepsFewerForwardsInFlightNeverMoreThanTheDeviceAbove) {
  const Problem problem = recomputed(4);
  const auto result = split_1f1b(problem, 4);
  ASSERT_TRUE(result);
  // d0 and d1 fit 2 forwards beside one B, d2 and d3 keep 1F1B's 2 and 1.
  EXPECT_EQ(to_text(result->schedule),
            "d0: F0 F1 B0 W0 F2 B1 W1 F3 B2 W2 F4 B3 W3 F5 B4 W4 F6 B5 W5 F7 B6 W6 B7 W7\n"
            "d1: F0 F1 B0 W0 F2 B1 W1 F3 B2 W2 F4 B3 W3 F5 B4 W4 F6 B5 W5 F7 B6 W6 B7 W7\n"
            "d2: F0 F1 B0 W0 F2 B1 W1 F3 B2 W2 F4 B3 W3 F5 B4 W4 F6 B5 W5 F7 B6 W6 B7 W7\n"
            "d3: F0 B0 W0 F1 B1 W1 F2 B2 W2 F3 B3 W3 F4 B4 W4 F5 B5 W5 F6 B6 W6 F7 B7 W7\n");
  const ValidationReport report = check_schedule(problem, result->schedule);
  EXPECT_TRUE(report.ok()) << report.message();
  for (double peak : peak_memory_by_order(problem, result->schedule)) EXPECT_LE(peak, 4);
}

TEST(Split1f1b, NothingWhenOneForwardAndItsBackwardDoNotFit) {
  EXPECT_FALSE(split_1f1b(recomputed(3), 2.99));
  EXPECT_TRUE(split_1f1b(recomputed(3), 3));  // one microbatch at a time
}

// At 4 (below 1F1B-with-split's 6, above 1F1B's fused 4) the greedy rounds fill the warm-up
// without room for B's recomputation and run out of memory; the fallback is the answer.
TEST(Split1f1b, ZbAutoFallsBackToItWhereTheGreedyRoundsRunOutOfMemory) {
  const Problem problem = recomputed(4);
  const GreedyResult result = greedy_schedule(problem);
  EXPECT_EQ(result.variant, 10);
  EXPECT_EQ(to_text(result.schedule), to_text(split_1f1b(problem, 4)->schedule));
  EXPECT_DOUBLE_EQ(result.span, evaluate(problem, result.schedule).metrics.span);
}

TEST(Split1f1b, ZbAutoBelowOneForwardAndItsBackwardNamesTheStageAndTheLeast) {
  try {
    greedy_schedule(recomputed(2.5));
    FAIL() << "expected a ScheduleError";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("stage 0 holds 3 (mem_f + mem_b) between a B and its W"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("at least 3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace zb
