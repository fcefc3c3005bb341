// The span lower bound: exact where the closed forms say so, never above any real schedule.
#include <gtest/gtest.h>

#include "tests/solver/brute_force.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generators.h"
#include "sim/solver/auto_schedule.h"
#include "sim/solver/detail/greedy_schedule.h"
#include "sim/solver/ilp_solver.h"
#include "sim/solver/detail/lower_bound.h"
#include "tests/solver/solver_test_support.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

using test::make_problem;

TEST(LowerBound, MeetsZbH1AndZbH2OnUnitCosts) {
  // Limit 8 = 1p: 4 forwards fit before B0 returns at 7: head idle 3 -> 24 + 3 = 27 = ZB-H1.
  const SpanLowerBound h1 = span_lower_bound(make_problem(4, 8, 1, 1, 1), 8);
  EXPECT_DOUBLE_EQ(h1.span, 27);
  EXPECT_DOUBLE_EQ(h1.head_idle[0], 3);
  EXPECT_DOUBLE_EQ(h1.head_idle[3], 0);
  EXPECT_DOUBLE_EQ(span_lower_bound(make_problem(4, 8, 1, 1, 1), 16).span, 24);
}

TEST(LowerBound, CountsTransfersTwicePerBoundary) {
  // p=3, t_comm=2: B0 reaches stage 0 after 1 + 2*(1+1) + 2*2*2 = 13; one forward fits (limit 2).
  const SpanLowerBound bound = span_lower_bound(make_problem(3, 4, 1, 1, 1, 2), 2);
  EXPECT_DOUBLE_EQ(bound.head_idle[0], 13 - 1);
}

TEST(LowerBound, TailIdleFromMemory) {
  // p=4, costs 5/7/3, t_comm 1, limit 10: after its last F, stage 0 waits 42 for that B; the other
  // pending B and W hold at most 8 memory units: 4 pending B (+W) = 40 of work, so 2 idle.
  const SpanLowerBound bound = span_lower_bound(make_problem(4, 8, 5, 7, 3, 1), 10);
  EXPECT_DOUBLE_EQ(bound.head_idle[0], 47 - 25);
  EXPECT_DOUBLE_EQ(bound.tail_idle[0], 2);
  EXPECT_DOUBLE_EQ(bound.span, 120 + 22 + 2);
}

// The paper's 1.5B costs, p=16, m=32 at 2p: every forward fits, so head and tail give only the
// work; but stage 15 runs 32 F and B after the forward chain reaches it, and the last gradient
// needs 15 more B and transfers to reach stage 0: zb-auto's span exactly, so it is optimal.
TEST(LowerBound, FlowThroughTheLastStage) {
  ProblemSpec spec = testing::uniform_spec(16, 32, 18.522, 18.086, 9.337, 0.601);
  spec.mem_f = {2};
  spec.mem_b = {-1};
  spec.mem_w = {-1};
  const Problem problem = spec.build("paper");
  const SpanLowerBound bound = span_lower_bound(problem, 64);
  const double expected = 15 * (18.522 + 0.601) + 32 * (18.522 + 18.086) + 15 * (0.601 + 18.086) + 9.337;
  EXPECT_NEAR(bound.flow[0], expected, 1e-9);
  EXPECT_NEAR(bound.span, expected, 1e-9);
  EXPECT_NEAR(greedy_schedule(problem, 64).span, expected, 1e-9);
}

TEST(LowerBound, NeverAboveTheBruteForceOptimum) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 24; ++trial) {
    const int p = 2 + trial % 2;
    const int m = 2 + trial % 2;
    const double times_p = 0.5 + 0.5 * (trial % 4);  // 0.5p .. 2p
    const Problem problem = test::random_problem(rng, p, m, times_p);
    const double limit = *problem.memory_limit();
    const double optimum = test::brute_force_span(problem, limit);
    if (!std::isfinite(optimum)) continue;
    EXPECT_LE(span_lower_bound(problem, limit).span, optimum + 1e-9) << "trial " << trial;
  }
}

TEST(LowerBound, NeverAboveHeuristicOrHandcraftedSchedules) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    const int p = 2 + trial % 6;
    const int m = p + trial % (2 * p);
    const Problem problem = test::random_problem(rng, p, m, 1.0 + 0.25 * (trial % 9));
    const double limit = *problem.memory_limit();
    const double bound = span_lower_bound(problem, limit).span;
    EXPECT_LE(bound, greedy_schedule(problem).span + 1e-9);
    // ZB-H1 peaks at p * M_B: the bound at that limit stays below its span.
    const Trace h1 = evaluate(problem, make_zb_h1(problem));
    double peak = 0;
    for (double v : h1.metrics.peak_memory) peak = std::max(peak, v);
    EXPECT_LE(span_lower_bound(problem, peak).span, h1.metrics.span + 1e-9);
  }
}

// One chunk per device: the multi-chunk bound never exceeds the optimum over every order.
TEST(ChunkedLowerBound, NeverAboveTheAnyOrderOptimumWithOneChunk) {
  std::mt19937 rng(1719);
  for (int trial = 0; trial < 12; ++trial) {
    const int p = 2 + trial % 3;
    const Problem problem = test::random_problem(rng, p, 2, trial % 2 == 0 ? 0.5 : 1.0);
    const double limit = *problem.memory_limit();
    const double optimum = test::any_order_span(problem, limit);
    if (!std::isfinite(optimum)) continue;
    EXPECT_LE(chunked_lower_bound(problem, limit), optimum + 1e-9) << "p=" << p << " trial " << trial;
  }
}

// Two chunks, interleaved and V, random costs and limits: never above zb-auto's span there, and
// above the busiest device's work somewhere (the head and tail idle are not vacuous).
TEST(ChunkedLowerBound, NeverAboveZbAutoWithTwoChunks) {
  std::mt19937 rng(1720);
  std::uniform_int_distribution<int> cost(1, 6);
  int checked = 0, above_work = 0;
  for (int trial = 0; trial < 80; ++trial) {
    ProblemSpec spec;
    spec.devices = 2 + trial % 3;
    spec.microbatches = 2 * spec.devices + trial % 5;
    spec.chunks = 2;
    spec.placement = trial % 2 == 0 ? Placement::interleaved : Placement::vshape;
    for (int s = 0; s < 2 * spec.devices; ++s) {
      spec.t_f.push_back(cost(rng));
      spec.t_b.push_back(cost(rng));
      spec.t_w.push_back(cost(rng));
    }
    spec.t_comm = {static_cast<double>(trial % 3 == 0)};
    spec.mem_limit = MemoryLimit{0.5 + 0.25 * (trial % 4), true};
    const Problem problem = spec.build("test");
    const double limit = *problem.memory_limit();
    AutoResult heuristic;
    try {
      heuristic = auto_schedule(problem, limit);
    } catch (const ScheduleError&) {
      continue;  // no candidate fits this limit
    }
    const double bound = chunked_lower_bound(problem, limit);
    EXPECT_LE(bound, heuristic.span + 1e-9) << "trial " << trial;
    EXPECT_LE(chunked_lower_bound(problem, -1), bound + 1e-9);  // a limit only adds idle
    ++checked;
    above_work += bound > problem.work() + 1e-9 ? 1 : 0;
  }
  EXPECT_GT(checked, 30);
  EXPECT_GT(above_work, 0);
}

// zb-ilp on several chunks: zb-auto with the bound, a certified gap, no exception.
TEST(ChunkedLowerBound, ZbIlpReportsACertifiedGapForTheV) {
  ProblemSpec spec = testing::uniform_spec(4, 12, 18.522, 18.086, 9.337, 0.601, 2);
  spec.placement = Placement::vshape;
  spec.mem_f = {2};
  spec.mem_b = {-1};
  spec.mem_w = {-1};
  spec.mem_limit = MemoryLimit{2, true};
  const Problem problem = spec.build("test");
  const IlpResult result = solve_ilp(problem, IlpOptions{});
  ASSERT_NE(result.status, IlpStatus::infeasible) << result.message;
  EXPECT_DOUBLE_EQ(result.span, auto_schedule(problem, *problem.memory_limit()).span);
  EXPECT_DOUBLE_EQ(result.best_bound, std::min(result.span, chunked_lower_bound(problem, *problem.memory_limit())));
  EXPECT_GE(result.gap, 0);
  EXPECT_LT(result.gap, 0.05);
  EXPECT_NE(result.message.find("2 chunks per device"), std::string::npos);
}

}  // namespace
}  // namespace zb
