// The memory frontier: monotone for zb-auto on equal costs, the ILP never above it, SVG output.
#include <gtest/gtest.h>

#include "sim/solver/frontier.h"
#include "sim/solver/frontier_svg.h"
#include "tests/solver/solver_test_support.h"

namespace zb {
namespace {

TEST(Frontier, SeventeenPointsFrom1pTo3pWithKnownEnds) {
  const Problem problem = test::make_problem(4, 8, 1, 1, 1);
  const auto points = memory_frontier(problem, FrontierOptions{});
  ASSERT_EQ(points.size(), 17u);  // 1p, 1.125p, ..., 3p
  EXPECT_DOUBLE_EQ(points.front().limit, 8);
  EXPECT_DOUBLE_EQ(points.back().limit_times_p, 3);
  EXPECT_DOUBLE_EQ(points.front().auto_span, 27);  // ZB-H1
  EXPECT_DOUBLE_EQ(points[8].auto_span, 24);       // 2p: ZB-H2, zero bubble
  EXPECT_DOUBLE_EQ(points[8].auto_bubble_rate, 0);
  for (const FrontierPoint& point : points) {
    EXPECT_TRUE(point.auto_feasible);
    EXPECT_LE(point.auto_peak_memory, point.limit + 1e-9);
    EXPECT_FALSE(point.ilp.has_value());
  }
}

TEST(Frontier, IlpPointsNeverAboveTheHeuristic) {
  const Problem problem = test::make_problem(4, 8, 5, 7, 3, 1);
  FrontierOptions options;
  options.from_times_p = 1.0;
  options.to_times_p = 1.5;
  options.step_times_p = 0.25;
  options.with_ilp = true;
  options.ilp_time_limit_s = 5;
  const auto points = memory_frontier(problem, options);
  ASSERT_EQ(points.size(), 3u);
  for (std::size_t k = 0; k < points.size(); ++k) {
    const FrontierPoint& point = points[k];
    ASSERT_TRUE(point.ilp.has_value());
    EXPECT_LE(point.ilp->span, point.auto_span + 1e-9);
    EXPECT_LE(point.ilp_bubble_rate, point.auto_bubble_rate + 1e-12);
    // More memory never hurts: each point starts from the previous optimum.
    if (k > 0) {
      EXPECT_LE(point.ilp->span, points[k - 1].ilp->span + 1e-9);
    }
  }
  const std::vector<FrontierCurve> curves{{Placement::linear, 1, points}};
  const std::string svg = frontier_svg(curves, "test <frontier>");
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("zb-ilp bound"), std::string::npos);
  EXPECT_NE(svg.find("test &lt;frontier&gt;"), std::string::npos);
  EXPECT_EQ(svg, frontier_svg(curves, "test <frontier>"));  // deterministic
}

TEST(Frontier, InfeasiblePointsAreRowsNotErrors) {
  const Problem problem = test::make_problem(4, 8, 1, 1, 1);
  FrontierOptions options;
  options.from_times_p = 0.125;  // limit 1 < mem_f = 2
  options.to_times_p = 0.25;
  options.with_ilp = true;
  const auto points = memory_frontier(problem, options);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_FALSE(points[0].auto_feasible);
  EXPECT_EQ(points[0].ilp->status, IlpStatus::infeasible);
  EXPECT_TRUE(points[1].auto_feasible);  // limit 2 = one forward per stage
}

}  // namespace
}  // namespace zb
