// The V-shape family (two chunks per device, stages d and 2p-1-d): checks from
// ../shared/V-SCHEDULES.md.
#include <gtest/gtest.h>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generators.h"
#include "sim/core/validator.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

using testing::v_problem;

TEST(ZbVHandcrafted, ZeroBubbleAtOneF1BsMemoryWithEqualCosts) {
  for (int p = 2; p <= 8; ++p) {
    for (int m : {2 * p, 2 * p + 3, 3 * p}) {
      const Problem problem = v_problem(p, m, 1, 1, 1);
      const Schedule schedule = make_zb_v_handcrafted(problem);
      ASSERT_TRUE(check_schedule(problem, schedule).ok()) << p << " " << m << "\n" << check_schedule(problem, schedule).message();
      const Trace trace = evaluate(problem, schedule);
      EXPECT_DOUBLE_EQ(trace.metrics.span, 6.0 * m) << "p=" << p << " m=" << m;  // 2m (t_f + t_b + t_w), no bubble
      double peak = 0;
      for (double value : trace.metrics.peak_memory) peak = std::max(peak, value);
      EXPECT_DOUBLE_EQ(peak, p) << "p=" << p << " m=" << m;  // 2p chunk activations = p M_B
    }
  }
}

TEST(ZbVHandcrafted, FewMicrobatchesStillComplete) {
  for (int m = 1; m < 7; ++m) {
    const Problem problem = v_problem(4, m, 1, 1, 1);
    EXPECT_TRUE(check_schedule(problem, make_zb_v_handcrafted(problem)).ok()) << m;
  }
}

TEST(ZbVHandcrafted, NeedsTheVPlacement) {
  EXPECT_THROW(make_zb_v_handcrafted(testing::uniform_problem(4, 8, 1, 1, 1, 0, 2)), InputError);  // interleaved
  EXPECT_THROW(make_zb_v_handcrafted(testing::uniform_problem(4, 8, 1, 1, 1)), InputError);
}

// DualPipeV with per-device costs (0.5 per chunk), overlap and all-to-all as given.
Problem dualpipe_problem(int p, int m, double overlap = 0) {
  ProblemSpec spec = testing::uniform_spec(p, m, 1, 1, 1, 0, 2);
  spec.placement = Placement::vshape;
  spec.overlap = overlap;
  return spec.build();
}

Schedule without_overlap(Schedule schedule) {
  for (auto& list : schedule.devices) {
    for (Action& action : list) action.overlap_next = false;
  }
  return schedule;
}

TEST(DualPipeV, ValidDeterministicAndPairsAForwardWithTheOtherChunksFullBackward) {
  for (int p = 1; p <= 6; ++p) {
    for (int m : {2 * p, 2 * p + 1, 3 * p + 2}) {
      const Problem problem = dualpipe_problem(p, m);
      const Schedule schedule = make_dualpipe_v(problem);
      const ValidationReport report = check_schedule(problem, schedule);
      ASSERT_TRUE(report.ok()) << "p=" << p << " m=" << m << "\n" << report.message();
      EXPECT_EQ(make_dualpipe_v(problem).devices, schedule.devices);
      int pairs = 0;
      for (const auto& list : schedule.devices) {
        for (std::size_t i = 0; i < list.size(); ++i) {
          if (!list[i].overlap_next) continue;
          ++pairs;
          EXPECT_EQ(list[i].pass, Pass::F);
          EXPECT_EQ(list[i + 1].pass, Pass::BW);
          EXPECT_NE(list[i].chunk, list[i + 1].chunk);
        }
      }
      // Device r: 2(m - 2p + r + 1) in the steady state (the last device's first F and BW run apart)
      // and p - r - 1 in the drain.
      int expected = 0;
      for (int r = 0; r < p; ++r) expected += 2 * (m - 2 * p + r + 1) + (p - r - 1);
      EXPECT_EQ(pairs, expected - 1) << "p=" << p << " m=" << m;
    }
  }
}

TEST(DualPipeV, UniformCostsLeaveOneAndAHalfIdleWhenThePairsRunAsTwoActions) {
  // Per-device costs 1 (0.5 per chunk): work m (t_f + t_b + t_w) = 30 per device.
  const Problem problem = dualpipe_problem(4, 10);
  const Schedule schedule = make_dualpipe_v(problem);
  const Trace flat = evaluate(problem, without_overlap(schedule));
  EXPECT_DOUBLE_EQ(flat.metrics.work, 30.0);
  EXPECT_DOUBLE_EQ(flat.metrics.makespan, 31.5);
  for (double idle : flat.metrics.idle) EXPECT_DOUBLE_EQ(idle, 1.5);
  // As blocks, a pair waits for both inputs: at overlap 0 each device idles p - 1 = 3.
  const Trace blocks = evaluate(problem, schedule);
  EXPECT_DOUBLE_EQ(blocks.metrics.makespan, 33.0);
  for (double idle : blocks.metrics.idle) EXPECT_DOUBLE_EQ(idle, 3.0);
  // Each pair is shorter by overlap * min(t_f, t_bw) = overlap * 0.5: 14 pairs' worth off the makespan.
  EXPECT_DOUBLE_EQ(evaluate(dualpipe_problem(4, 10, 0.5), schedule).metrics.makespan, 29.5);
  EXPECT_DOUBLE_EQ(evaluate(dualpipe_problem(4, 10, 1), schedule).metrics.makespan, 26.0);
}

TEST(DualPipeV, PeaksAtOneChunkActivationAboveOneF1B) {
  for (int p = 1; p <= 6; ++p) {
    const Problem problem = dualpipe_problem(p, 3 * p);
    const Trace trace = evaluate(problem, make_dualpipe_v(problem));
    for (double peak : trace.metrics.peak_memory) EXPECT_DOUBLE_EQ(peak, p + 0.5) << "p=" << p;  // (2p+1) M_B/2
  }
}

TEST(DualPipeV, NeedsTheVPlacementAndTwoMicrobatchesPerDevice) {
  EXPECT_THROW(make_dualpipe_v(testing::uniform_problem(4, 8, 1, 1, 1, 0, 2)), InputError);  // interleaved
  EXPECT_THROW(make_dualpipe_v(dualpipe_problem(4, 7)), InputError);
  EXPECT_NO_THROW(make_dualpipe_v(dualpipe_problem(4, 8)));
}

}  // namespace
}  // namespace zb
