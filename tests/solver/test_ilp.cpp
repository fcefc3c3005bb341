// zb-ilp on CBC: proofs on small problems, agreement with brute force, limits, decomposition.
#include <gtest/gtest.h>

#include <chrono>

#include "tests/solver/brute_force.h"
#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generators.h"
#include "sim/solver/detail/greedy_schedule.h"
#include "sim/solver/ilp_solver.h"
#include "tests/solver/solver_test_support.h"
#include "sim/core/validator.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

using test::make_problem;

#define REQUIRE_CBC() \
  if (!ilp_available()) GTEST_SKIP() << "built without COIN-OR CBC"

// Every returned schedule is valid, within the limit, and its span is what the evaluator says.
void expect_sound(const Problem& problem, const IlpResult& result) {
  ASSERT_NE(result.status, IlpStatus::infeasible) << result.message;
  Problem limited = problem;
  limited.mem_limit = MemoryLimit{result.memory_limit, false};
  const ValidationReport report = check_schedule(limited, result.schedule);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_NEAR(evaluate(problem, result.schedule).metrics.span, result.span, 1e-6);
  EXPECT_LE(result.best_bound, result.span + 1e-9);
  EXPECT_LE(result.span, result.heuristic_span + 1e-9);
  EXPECT_GE(result.gap, 0);
}

TEST(Ilp, UnitCostsLimit1pIsProvenOptimalAt27) {
  REQUIRE_CBC();
  const Problem problem = make_problem(4, 8, 1, 1, 1, 0, 8);
  IlpOptions options;
  options.node_limit = 1'000'000;  // a proof, whatever it costs
  options.time_limit_s = 60;
  const auto start = std::chrono::steady_clock::now();
  const IlpResult result = solve_ilp(problem, options);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 60);
  EXPECT_EQ(result.status, IlpStatus::optimal);
  EXPECT_DOUBLE_EQ(result.span, 27);
  EXPECT_DOUBLE_EQ(result.best_bound, 27);
  EXPECT_DOUBLE_EQ(result.gap, 0);
  expect_sound(problem, result);
}

// Between 1p and 2p the heuristic leaves room: CBC must find 145 (zb-auto: 148) and prove it.
TEST(Ilp, BeatsTheHeuristicAndProvesItBetween1pAnd2p) {
  REQUIRE_CBC();
  const Problem problem = make_problem(4, 8, 5, 7, 3, 1, 10);
  IlpOptions options;
  options.node_limit = 1'000'000;
  options.time_limit_s = 40;
  options.search_node_limit = 0;  // CBC alone (the order search's proof: test_certificate.cpp)
  const IlpResult result = solve_ilp(problem, options);
  EXPECT_TRUE(result.solver_called);
  EXPECT_DOUBLE_EQ(result.heuristic_span, 148);
  EXPECT_EQ(result.status, IlpStatus::optimal) << result.message;
  EXPECT_DOUBLE_EQ(result.span, 145);
  expect_sound(problem, result);
}

TEST(Ilp, EqualsBruteForceOnTinyProblems) {
  REQUIRE_CBC();
  std::mt19937 rng(2024);
  int solved = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const int p = 2 + trial % 2;
    const int m = p == 2 ? 3 + trial % 2 : 3;
    const Problem problem = test::random_problem(rng, p, m, 0.75 + 0.25 * (trial % 4));
    const double limit = *problem.memory_limit();
    const double optimum = test::brute_force_span(problem, limit);
    IlpOptions options;
    options.node_limit = 1'000'000;
    options.time_limit_s = 30;
    const IlpResult result = solve_ilp(problem, options);
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " p=" << p << " m=" << m << " limit=" << limit);
    ASSERT_TRUE(std::isfinite(optimum));
    EXPECT_EQ(result.status, IlpStatus::optimal) << result.message;
    EXPECT_NEAR(result.span, optimum, 1e-6);
    expect_sound(problem, result);
    ++solved;
  }
  EXPECT_EQ(solved, 12);
}

TEST(Ilp, NeverWorseThanHeuristicWhichNeverLosesToZbH1) {
  REQUIRE_CBC();
  std::mt19937 rng(31337);
  for (int trial = 0; trial < 8; ++trial) {
    const int p = 3 + trial % 2;
    const int m = 2 * p;
    const Problem problem = test::random_problem(rng, p, m, 1.0);
    IlpOptions options;
    options.time_limit_s = 1;
    const IlpResult result = solve_ilp(problem, options);
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    expect_sound(problem, result);
    EXPECT_LE(result.heuristic_span, evaluate(problem, make_zb_h1(problem)).metrics.span + 1e-9);
  }
}

TEST(Ilp, InfeasibleLimitIsAStatusNotACrash) {
  const Problem problem = make_problem(4, 8, 1, 1, 1, 0, 1);
  const IlpResult result = solve_ilp(problem, IlpOptions{});
  EXPECT_EQ(result.status, IlpStatus::infeasible);
  EXPECT_NE(result.message.find("memory limit 1"), std::string::npos) << result.message;
  EXPECT_TRUE(result.schedule.devices.empty());
  EXPECT_THROW(require_schedule(result), ScheduleError);
}

TEST(Ilp, SmallestFeasibleLimitWorks) {
  REQUIRE_CBC();
  const Problem problem = make_problem(3, 4, 2, 3, 1, 0, 2);
  IlpOptions options;
  options.node_limit = 1'000'000;
  options.time_limit_s = 20;
  const IlpResult result = solve_ilp(problem, options);
  expect_sound(problem, result);
}

// Unbalanced per-stage costs at a limit between 1p and 2p: does not close in a few seconds.
Problem hard_problem() {
  ProblemSpec spec;
  spec.devices = 6;
  spec.microbatches = 12;
  spec.t_f = {4, 6, 5, 7, 5, 4};
  spec.t_b = {7, 8, 6, 9, 8, 7};
  spec.t_w = {3, 5, 2, 4, 3, 4};
  spec.t_comm = {1};
  spec.mem_f = {2};
  spec.mem_b = {-1};
  spec.mem_w = {-1};
  return spec.build("test");
}

// Nodes, not seconds, end the search: two very different wall-clock nets give one result (on a
// problem whose root node is quick: the root's cuts are work that nodes do not bound).
TEST(Ilp, TheNodeBudgetMakesTheResultIndependentOfTheClock) {
  REQUIRE_CBC();
  const Problem problem = make_problem(4, 8, 5, 7, 3, 1, 10);  // proving 145 takes thousands of nodes
  IlpOptions options;
  options.node_limit = 30;
  options.search_node_limit = 0;  // CBC's budget alone, from zb-auto's start
  options.local_search_evaluations = 0;
  options.time_limit_s = 30;
  const IlpResult first = solve_ilp(problem, options);
  options.time_limit_s = 90;
  const IlpResult second = solve_ilp(problem, options);
  EXPECT_TRUE(first.stopped_by_nodes);
  EXPECT_FALSE(first.stopped_by_wall_clock);
  EXPECT_NE(first.message.find("node budget of 30 reached"), std::string::npos) << first.message;
  EXPECT_EQ(first.status, IlpStatus::feasible);
  EXPECT_GE(first.nodes, 30);
  EXPECT_EQ(first.schedule.devices, second.schedule.devices);
  EXPECT_EQ(first.span, second.span);
  EXPECT_EQ(first.best_bound, second.best_bound);
  EXPECT_EQ(first.nodes, second.nodes);
  expect_sound(problem, first);
}

TEST(Ilp, TheWallClockSafetyNetSaysWhenItFires) {
  REQUIRE_CBC();
  IlpOptions options;
  options.memory_limit = 17;
  options.node_limit = 1'000'000'000;
  options.time_limit_s = 1;
  const IlpResult result = solve_ilp(hard_problem(), options);
  EXPECT_TRUE(result.stopped_by_wall_clock);
  EXPECT_NE(result.message.find("wall-clock safety net of 1 s fired"), std::string::npos) << result.message;
  expect_sound(hard_problem(), result);
}

TEST(Ilp, WallClockLimitIsKept) {
  REQUIRE_CBC();
  const Problem problem = hard_problem();
  IlpOptions options;
  options.memory_limit = 17;
  options.node_limit = 1'000'000'000;  // the net, not the budget, ends this search
  options.time_limit_s = 2;
  const auto start = std::chrono::steady_clock::now();
  const IlpResult result = solve_ilp(problem, options);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 3.5);
  EXPECT_NEAR(result.solve_seconds, seconds, 0.5);
  expect_sound(problem, result);
  if (result.status == IlpStatus::feasible) {
    EXPECT_GT(result.gap, 0);
  }
}

TEST(Ilp, DecomposesLargeProblemsAndNeverLosesToTheHeuristic) {
  REQUIRE_CBC();
  ProblemSpec spec = testing::uniform_spec(8, 48, 5, 7, 3, 1);
  spec.mem_f = {2};
  spec.mem_b = {-1};
  spec.mem_w = {-1};
  const Problem problem = spec.build("test");
  IlpOptions options;
  options.memory_limit = 22;  // 1.375p
  options.time_limit_s = 4;
  const IlpResult result = solve_ilp(problem, options);
  EXPECT_TRUE(result.decomposed);
  EXPECT_GT(result.order_variables, 0u);
  expect_sound(problem, result);
  EXPECT_LT(result.solve_seconds, 6);
}

TEST(Ilp, StartsFromABetterCallerScheduleAndIgnoresForeignOnes) {
  REQUIRE_CBC();
  // The optimum at limit 10 (145) also fits limit 11, where zb-auto gives 147.
  const Problem problem = make_problem(4, 8, 5, 7, 3, 1);
  IlpOptions at_10;
  at_10.memory_limit = 10;
  at_10.node_limit = 1'000'000;
  at_10.time_limit_s = 40;
  const IlpResult first = solve_ilp(problem, at_10);
  ASSERT_DOUBLE_EQ(first.span, 145);
  IlpOptions at_11;
  at_11.memory_limit = 11;
  at_11.time_limit_s = 0.01;  // no time to solve: the result is the warm start
  at_11.search_node_limit = 0;  // (the order search finds 144 here at once,
  at_11.local_search_evaluations = 0;  // the local search 143)
  at_11.warm_start = first.schedule;
  const IlpResult second = solve_ilp(problem, at_11);
  EXPECT_DOUBLE_EQ(second.heuristic_span, 147);
  EXPECT_DOUBLE_EQ(second.span, 145);
  expect_sound(problem, second);
  // A schedule of another shape is ignored, not an error.
  at_11.warm_start = solve_ilp(make_problem(3, 8, 5, 7, 3, 1, 12), IlpOptions{}).schedule;
  EXPECT_DOUBLE_EQ(solve_ilp(problem, at_11).span, 147);
}

TEST(Ilp, RejectsTheBidirectionalPlacement) {
  ProblemSpec spec = testing::uniform_spec(2, 4, 1, 1, 1, 0, 2);
  spec.placement = Placement::bidirectional;
  EXPECT_THROW(solve_ilp(spec.build("test"), IlpOptions{}), InputError);
}

}  // namespace
}  // namespace zb
