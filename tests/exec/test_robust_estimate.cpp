// The robust estimate calibration keeps per pass: median without outliers, scaled MAD.
#include <gtest/gtest.h>

#include "exec/calibration/detail/robust_estimate.h"

namespace zb::exec {
namespace {

// 1, 1.1, 0.9, 1.05, 0.95 and one sample from a busy moment: the median is 1.025, the deviations
// 0.025 0.075 0.125 0.025 0.075 3.975 have a MAD of 0.075; 3.975 is a modified z-score of 35.7, an
// outlier; the others stay (the farthest, 0.9, scores 1.1), and the estimate is their median, 1.
TEST(RobustEstimate, LeavesOutASlowSampleAndReportsTheSpread) {
  const RobustEstimate estimate = robust_estimate({1, 1.1, 0.9, 1.05, 0.95, 5});
  EXPECT_EQ(estimate.outliers, (std::vector<std::size_t>{5}));
  EXPECT_DOUBLE_EQ(estimate.value, 1);
  EXPECT_NEAR(estimate.spread, 1.4826 * 0.075, 1e-12);
}

TEST(RobustEstimate, EdgeCases) {
  EXPECT_DOUBLE_EQ(robust_estimate({}).value, 0);
  const RobustEstimate one = robust_estimate({2.5});
  EXPECT_DOUBLE_EQ(one.value, 2.5);
  EXPECT_DOUBLE_EQ(one.spread, 0);
  EXPECT_TRUE(one.outliers.empty());
  // Most samples equal (a MAD of 0): any other one is an outlier.
  const RobustEstimate equal = robust_estimate({3, 3, 3, 7});
  EXPECT_EQ(equal.outliers, (std::vector<std::size_t>{3}));
  EXPECT_DOUBLE_EQ(equal.value, 3);
  // Two equal halves: no outlier, the median between them.
  const RobustEstimate halves = robust_estimate({1, 1, 2, 2});
  EXPECT_TRUE(halves.outliers.empty());
  EXPECT_DOUBLE_EQ(halves.value, 1.5);
}

}  // namespace
}  // namespace zb::exec
