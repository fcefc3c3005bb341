// The V-shape family (two chunks per device, stages d and 2p-1-d): checks from
// ../shared/V-SCHEDULES.md.
#include <gtest/gtest.h>

#include "sim/schedule/error.h"
#include "sim/schedule/evaluator.h"
#include "sim/schedule/generators.h"
#include "sim/schedule/validator.h"
#include "tests/support/problems.h"

namespace zb {
namespace {

// Equal per-chunk costs (per-device costs are split over the two chunks).
Problem v_problem(int p, int m, double per_chunk_f, double per_chunk_b, double per_chunk_w, double tcomm = 0) {
  ProblemSpec spec = testing::uniform_spec(p, m, 2 * per_chunk_f, 2 * per_chunk_b, 2 * per_chunk_w, tcomm, 2);
  spec.placement = Placement::vshape;
  return spec.build();
}

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

}  // namespace
}  // namespace zb
