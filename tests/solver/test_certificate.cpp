// zb-ilp's certificates against exhaustive search: each proof claims exactly what it shows.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "sim/solver/ilp_solver.h"
#include "sim/solver/detail/lower_bound.h"
#include "tests/solver/brute_force.h"
#include "tests/solver/solver_test_support.h"

namespace zb {
namespace {

struct Tally {
  int lower_bound = 0;
  int milp = 0;
  int time_windows = 0;
  int search = 0;
  int unproven = 0;
  int in_order_loses = 0;  // cases where keeping microbatch order costs span
  int sequence_stronger = 0;  // cases where sequence_lower_bound beats the closed forms
};

// One tiny problem: the bound never exceeds the best span of any order; a lower-bound proof is
// the optimum over every order, a MILP or time-window proof the optimum over in-order schedules.
// `search`: with the order search first (its proofs), or without (CBC's).
void check_certificate(const Problem& problem, bool search, Tally& tally) {
  const double limit = *problem.memory_limit();
  IlpOptions options;
  options.node_limit = 100'000;  // tiny models: a proof, whatever it costs
  options.search_node_limit = search ? 10'000'000 : 0;
  options.time_limit_s = 60;
  const IlpResult result = solve_ilp(problem, options);
  const double any_order = test::any_order_span(problem, limit);
  if (result.status == IlpStatus::infeasible) {
    EXPECT_FALSE(std::isfinite(any_order)) << "infeasible, but an order of span " << any_order << " fits";
    return;
  }
  ASSERT_TRUE(std::isfinite(any_order));
  const double in_order = test::brute_force_span(problem, limit);
  if (in_order > any_order + 1e-9) ++tally.in_order_loses;
  EXPECT_LE(span_lower_bound(problem, limit).span, any_order + 1e-9);
  const double sequence = sequence_lower_bound(problem, limit);
  EXPECT_LE(sequence, any_order + 1e-9) << "the single-stage program cut off the optimum";
  if (sequence > span_lower_bound(problem, limit).span + 1e-9) ++tally.sequence_stronger;
  EXPECT_LE(result.best_bound, result.span + 1e-9);
  EXPECT_GE(result.span, any_order - 1e-9) << "a span below the optimum over every order";
  EXPECT_EQ(result.proof != IlpProof::none, result.status == IlpStatus::optimal);
  switch (result.proof) {
    case IlpProof::lower_bound:
      ++tally.lower_bound;
      EXPECT_NEAR(result.span, any_order, 1e-9) << "the lower bound certified a span above the optimum";
      break;
    case IlpProof::search:
      ++tally.search;
      EXPECT_NEAR(result.span, in_order, 1e-9) << "the order search certified a span above the in-order optimum";
      EXPECT_LE(result.best_bound, in_order + 1e-9);
      break;
    case IlpProof::milp:
    case IlpProof::time_windows:
      ++(result.proof == IlpProof::milp ? tally.milp : tally.time_windows);
      EXPECT_NEAR(result.span, in_order, 1e-9) << ilp_proof_name(result.proof)
                                               << " certified a span above the in-order optimum";
      EXPECT_LE(result.best_bound, in_order + 1e-9);
      break;
    case IlpProof::none:
      ++tally.unproven;
      EXPECT_LE(result.best_bound, in_order + 1e-9);
      break;
  }
}

TEST(Certificate, EveryProofIsTheExhaustiveOptimumOnTinyProblems) {
  if (!ilp_available()) GTEST_SKIP() << "built without COIN-OR CBC";
  std::mt19937 rng(1717);
  Tally tally;
  struct Shape {
    int p, m;
    std::vector<double> limits;  // multiples of p * mem_f
  };
  // p=2 m=3 holds 1,680 orders per device without a limit: only its memory-bound limits.
  const std::vector<Shape> shapes = {
      {2, 2, {0.5, 0.75, 1.0}}, {3, 2, {0.34, 0.5, 1.0}}, {4, 2, {0.25, 0.5, 1.0}}, {2, 3, {0.5, 0.75}}};
  for (const Shape& shape : shapes) {
    for (int trial = 0; trial < 6; ++trial) {
      for (double limit : shape.limits) {
        const Problem problem = test::random_problem(rng, shape.p, shape.m, limit);
        SCOPED_TRACE(::testing::Message() << "p=" << shape.p << " m=" << shape.m << " limit " << limit << "p trial "
                                          << trial);
        check_certificate(problem, false, tally);
        check_certificate(problem, true, tally);
      }
    }
  }
  // Both kinds of proof occur, so neither branch above is vacuous.
  EXPECT_GT(tally.lower_bound, 0);
  EXPECT_GT(tally.milp + tally.time_windows, 0);
  EXPECT_GT(tally.search, 0);
  EXPECT_EQ(tally.unproven, 0);  // tiny problems: the search always finishes
  EXPECT_GT(tally.sequence_stronger, 0);  // the single-stage program adds something
  RecordProperty("lower_bound_proofs", tally.lower_bound);
  RecordProperty("milp_proofs", tally.milp);
  RecordProperty("time_window_proofs", tally.time_windows);
  RecordProperty("search_proofs", tally.search);
  RecordProperty("unproven", tally.unproven);
  std::printf("certificates: %d lower bound, %d MILP, %d time windows, %d search, %d unproven; in-order optimum above "
              "the any-order one in %d; the sequence bound stronger in %d\n",
              tally.lower_bound, tally.milp, tally.time_windows, tally.search, tally.unproven, tally.in_order_loses,
              tally.sequence_stronger);
}

// The known optimum of p=4 m=8, 5/7/3 costs, t_comm 1, limit 10 (brute-forced in test_ilp's
// EqualsBruteForce family; zb-auto 148): only CBC can certify 145, the lower bound is below it.
TEST(Certificate, TheMilpCertifiesWhatTheBoundCannot) {
  if (!ilp_available()) GTEST_SKIP() << "built without COIN-OR CBC";
  const Problem problem = test::make_problem(4, 8, 5, 7, 3, 1, 10);
  IlpOptions options;
  options.search_node_limit = 0;  // CBC alone
  const IlpResult result = solve_ilp(problem, options);
  ASSERT_EQ(result.status, IlpStatus::optimal) << result.message;
  EXPECT_DOUBLE_EQ(result.span, 145);
  EXPECT_LT(span_lower_bound(problem, 10).span, 145);
  EXPECT_EQ(result.proof, IlpProof::milp);
}

// The same optimum from the order search, without CBC, in a few thousand nodes.
TEST(Certificate, TheOrderSearchCertifiesWhatTheBoundCannot) {
  const Problem problem = test::make_problem(4, 8, 5, 7, 3, 1, 10);
  const IlpResult result = solve_ilp(problem, IlpOptions{});
  ASSERT_EQ(result.status, IlpStatus::optimal) << result.message;
  EXPECT_DOUBLE_EQ(result.span, 145);
  EXPECT_EQ(result.proof, IlpProof::search);
  EXPECT_GT(result.search_nodes, 0);
  EXPECT_FALSE(result.solver_called);
}

// An order search cut short by its budget proves nothing and hands over to CBC.
TEST(Certificate, ACutShortSearchProvesNothing) {
  const Problem problem = test::make_problem(4, 8, 5, 7, 3, 1, 10);
  IlpOptions options;
  options.search_node_limit = 10;
  options.node_limit = 1;
  const IlpResult result = solve_ilp(problem, options);
  EXPECT_EQ(result.search_nodes, 10);
  EXPECT_NE(result.proof, IlpProof::search);
}

TEST(Certificate, TheLowerBoundNeedsNoSolver) {
  const Problem problem = test::make_problem(4, 8, 1, 1, 1, 0, 16);
  const IlpResult result = solve_ilp(problem, IlpOptions{});
  ASSERT_EQ(result.status, IlpStatus::optimal);
  EXPECT_EQ(result.proof, IlpProof::lower_bound);
  EXPECT_FALSE(result.solver_called);
}

TEST(Certificate, UnprovenResultsCarryNoProof) {
  if (!ilp_available()) GTEST_SKIP() << "built without COIN-OR CBC";
  // The MILP-proved case above at a budget of one node: CBC needs more to close it.
  const Problem problem = test::make_problem(4, 8, 5, 7, 3, 1, 10);
  IlpOptions options;
  options.node_limit = 1;
  options.search_node_limit = 0;
  options.local_search_evaluations = 0;  // the local search finds the optimum 145, which CBC then proves at once
  const IlpResult result = solve_ilp(problem, options);
  ASSERT_EQ(result.status, IlpStatus::feasible) << result.message;
  EXPECT_EQ(result.proof, IlpProof::none);
  EXPECT_GT(result.gap, 0);
}

}  // namespace
}  // namespace zb
