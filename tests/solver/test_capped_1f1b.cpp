// The memory-capped 1F1B orders: valid, in order, what they claim, and zb-ilp's better start.
#include <gtest/gtest.h>

#include "sim/core/memory.h"
#include "sim/core/problem_spec.h"
#include "sim/core/validator.h"
#include "sim/solver/detail/capped_1f1b.h"
#include "sim/solver/detail/greedy_schedule.h"
#include "sim/solver/ilp_solver.h"
#include "sim/solver/detail/list_timing.h"
#include "sim/solver/detail/lower_bound.h"
#include "tests/testing/problems.h"
#include "tests/solver/solver_test_support.h"

namespace zb {
namespace {

TEST(Capped1f1b, EveryStageOrderFitsItsLimitAndKeepsOrder) {
  const Problem problem = test::make_problem(4, 10, 3, 4, 2, 1, 10);
  for (int warmup = 1; warmup <= 5; ++warmup) {
    for (const bool eager : {false, true}) {
      Schedule schedule;
      for (int s = 0; s < problem.devices; ++s)
        schedule.devices.push_back(capped_1f1b_stage(problem, s, warmup, 10, eager));
      test::expect_complete_in_order(problem, schedule);
      EXPECT_FALSE(first_over_limit(peak_memory_by_order(problem, schedule), 10)) << "warm-up " << warmup;
    }
  }
}

// On random problems: the best order is valid and its span is its list timing; zb-ilp is never
// longer than it or zb-auto, and the same input gives the same order.
TEST(Capped1f1b, TheBestOrderIsWhatItClaimsAndZbIlpKeepsTheShorter) {
  int found = 0;
  test::for_random_problems(17, 12, [&](const Problem& problem, double limit) {
    const std::optional<Capped1f1bResult> best = best_capped_1f1b(problem, limit);
    if (!best) return;
    ++found;
    test::expect_complete_in_order(problem, best->schedule);
    EXPECT_FALSE(first_over_limit(peak_memory_by_order(problem, best->schedule), limit));
    EXPECT_DOUBLE_EQ(list_timing(problem, best->schedule).span, best->span);
    EXPECT_EQ(best_capped_1f1b(problem, limit)->schedule.devices, best->schedule.devices);
    IlpOptions options;
    options.search_node_limit = 0;
    options.node_limit = 1;
    options.time_limit_s = 5;
    const IlpResult result = solve_ilp(problem, options);
    EXPECT_LE(result.span, best->span + 1e-9 * best->span);
    EXPECT_LE(result.span, greedy_schedule(problem, limit).span + 1e-9 * best->span);
  });
  EXPECT_GT(found, 8);
}

// Where zb-auto's rounds leave a gap the capped order closes it: the paper's 1.5B costs at p=16,
// m=48, limit 1.25p, proven optimal by the lower bound alone, below zb-auto.
TEST(Capped1f1b, MeetsTheLowerBoundWhereZbAutoDoesNot) {
  ProblemSpec spec = testing::uniform_spec(16, 48, 18.522, 18.086, 9.337, 0.601);
  spec.mem_f = {2};
  spec.mem_b = {-1};
  spec.mem_w = {-1};
  spec.mem_limit = MemoryLimit{1.25 * 16 * 2, false};
  const Problem problem = spec.build("paper");
  const double limit = *problem.memory_limit();
  const double bound = span_lower_bound(problem, limit).span;
  const std::optional<Capped1f1bResult> best = best_capped_1f1b(problem, limit);
  ASSERT_TRUE(best.has_value());
  EXPECT_LT(best->span, greedy_schedule(problem, limit).span);
  EXPECT_NEAR(best->span, bound, 1e-6 * bound);
  IlpOptions options;
  options.search_node_limit = 0;
  const IlpResult result = solve_ilp(problem, options);
  EXPECT_EQ(result.status, IlpStatus::optimal);
  EXPECT_EQ(result.proof, IlpProof::lower_bound);
  EXPECT_FALSE(result.solver_called);
}

}  // namespace
}  // namespace zb
