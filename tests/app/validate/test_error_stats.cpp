// Quantiles, ranks and Spearman's rho against values numpy and scipy print for the same samples.
#include <gtest/gtest.h>

#include "sim/app/validate/error_stats.h"

namespace {

using zb::validate::average_ranks;
using zb::validate::quantile;
using zb::validate::spearman;
using zb::validate::summarize_errors;

TEST(Quantile, InterpolatesLinearlyBetweenOrderStatistics) {
  // numpy.quantile([4, 1, 3, 2], [0.5, 0.9, 0, 1]) = [2.5, 3.7, 1, 4]
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.0), 1);
  EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 1.0), 4);
  EXPECT_DOUBLE_EQ(quantile({7}, 0.9), 7);
  EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0);
}

TEST(Quantile, SummaryTakesMagnitudesButKeepsTheSignedMedian) {
  const auto s = summarize_errors({-0.3, 0.1, 0.2, -0.05, 0.4});
  EXPECT_EQ(s.n, 5);
  EXPECT_DOUBLE_EQ(s.median_abs, 0.2);    // |e| sorted: .05 .1 .2 .3 .4
  EXPECT_DOUBLE_EQ(s.p90_abs, 0.36);      // position 3.6: .3 + .6 x .1
  EXPECT_DOUBLE_EQ(s.median, 0.1);        // e sorted: -.3 -.05 .1 .2 .4
}

TEST(Ranks, TiesShareTheMeanOfTheirRanks) {
  // scipy.stats.rankdata([10, 20, 10, 30, 20, 20]) = [1.5, 4, 1.5, 6, 4, 4]
  EXPECT_EQ(average_ranks({10, 20, 10, 30, 20, 20}), (std::vector<double>{1.5, 4, 1.5, 6, 4, 4}));
}

TEST(Spearman, MatchesScipy) {
  // scipy.stats.spearmanr([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]).statistic = 0.8207826816681233
  EXPECT_NEAR(*spearman({1, 2, 3, 4, 5}, {5, 6, 7, 8, 7}), 0.8207826816681233, 1e-12);
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3}, {30, 20, 10}), -1.0);
  EXPECT_DOUBLE_EQ(*spearman({1, 2, 3}, {1, 4, 9}), 1.0);  // any increasing function
}

TEST(Spearman, UndefinedForConstantOrTooFewValues) {
  EXPECT_FALSE(spearman({1, 2, 3}, {5, 5, 5}).has_value());
  EXPECT_FALSE(spearman({1}, {2}).has_value());
  EXPECT_FALSE(spearman({1, 2}, {2}).has_value());
}

}  // namespace
