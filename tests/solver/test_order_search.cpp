// The order search against exhaustive enumeration of in-order schedules on tiny problems.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "sim/core/memory.h"
#include "sim/core/validator.h"
#include "sim/solver/detail/ilp_order_search.h"
#include "sim/solver/detail/list_timing.h"
#include "tests/solver/brute_force.h"
#include "tests/solver/solver_test_support.h"

namespace zb {
namespace {

// From a useless incumbent the search must find the in-order optimum itself, and its schedule
// must be what it claims: that span when list-scheduled, within the limit.
TEST(OrderSearch, FindsTheExhaustiveOptimumFromScratch) {
  std::mt19937 rng(2026);
  int cases = 0;
  struct Shape {
    int p, m;
    std::vector<double> limits;  // multiples of p * mem_f
  };
  const std::vector<Shape> shapes = {{2, 2, {0.5, 1.0}}, {3, 2, {0.34, 1.0}}, {4, 2, {0.25, 0.5, 1.0}},
                                     {2, 3, {0.5, 0.75, 1.5}}, {3, 3, {0.34, 0.5}}};
  for (const Shape& shape : shapes) {
    for (int trial = 0; trial < 5; ++trial) {
      for (double times_p : shape.limits) {
        const Problem problem = test::random_problem(rng, shape.p, shape.m, times_p);
        const double limit = *problem.memory_limit();
        SCOPED_TRACE(::testing::Message() << "p=" << shape.p << " m=" << shape.m << " limit " << limit << " trial "
                                          << trial);
        const double exhaustive = test::brute_force_span(problem, limit);
        OrderSearchOptions options;
        options.memory_limit = limit;
        options.step = 1;  // integer costs
        const OrderSearchResult result = search_in_order_schedules(problem, 1e9, options);
        ASSERT_TRUE(result.complete);
        if (!std::isfinite(exhaustive)) {
          EXPECT_FALSE(result.better.has_value());
          continue;
        }
        ASSERT_TRUE(result.better.has_value());
        EXPECT_DOUBLE_EQ(result.span, exhaustive);
        // The root bound, its devices' programs raising each other's release times, stays valid.
        EXPECT_LE(result.root_bound, exhaustive + 1e-9 * exhaustive);
        EXPECT_DOUBLE_EQ(list_timing(problem, *result.better).span, result.span);
        EXPECT_FALSE(first_over_limit(peak_memory_by_order(problem, *result.better), limit));
        ++cases;
        // Given the optimum as the incumbent, it proves it: nothing one step shorter.
        const OrderSearchResult proof = search_in_order_schedules(problem, exhaustive, options);
        EXPECT_TRUE(proof.complete);
        EXPECT_FALSE(proof.better.has_value());
      }
    }
  }
  EXPECT_GT(cases, 40);
}

// The node budget decides where the search stops: the same budget gives the same result.
TEST(OrderSearch, TheNodeBudgetStopsItDeterministically) {
  const Problem problem = test::make_problem(4, 8, 5, 7, 3, 1, 10);
  OrderSearchOptions options;
  options.memory_limit = 10;
  options.step = 1;
  options.node_limit = 50;
  const OrderSearchResult a = search_in_order_schedules(problem, 1e9, options);
  const OrderSearchResult b = search_in_order_schedules(problem, 1e9, options);
  EXPECT_FALSE(a.complete);
  EXPECT_TRUE(a.stopped_by_nodes);
  EXPECT_EQ(a.nodes, 50);
  EXPECT_EQ(a.span, b.span);
}

}  // namespace
}  // namespace zb
