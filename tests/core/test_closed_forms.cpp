// Property tests: the closed forms of docs/design.md section 4 over many (p, m, costs).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "sim/core/evaluator.h"
#include "sim/core/generators/generators.h"
#include "tests/testing/problems.h"
#include "sim/core/validator.h"

namespace zb {
namespace {

struct Costs {
  double tf, tb, tw;
};

// Costs in the paper's regime t_w <= min(t_f, t_b), plus equal costs.
const Costs kRegime[] = {{1, 1, 1}, {2, 2, 1}, {3, 2, 1}, {2, 3, 1}, {5, 4, 2}, {1.5, 2.5, 0.5}, {4, 4, 4}};

double span_of(const Problem& problem, const Schedule& schedule) {
  validate(problem, schedule);
  return evaluate(problem, schedule, {.record_spans = false, .record_memory = false}).metrics.span;
}

TEST(ClosedForms, UnitCostsP4M8) {
  const Problem problem = testing::uniform_problem(4, 8, 1, 1, 1);
  EXPECT_DOUBLE_EQ(span_of(problem, make_1f1b(problem)), 33);
  EXPECT_DOUBLE_EQ(span_of(problem, make_zb_h1(problem)), 27);
  EXPECT_DOUBLE_EQ(span_of(problem, make_zb_h2(problem)), 24);
}

TEST(ClosedForms, BubblesWithoutCommunication) {
  for (int p : {2, 3, 4, 5, 8, 12}) {
    for (int m : {2 * p, 2 * p + 1, 3 * p, 4 * p + 3}) {
      for (const Costs& c : kRegime) {
        SCOPED_TRACE(fmt::format("p={} m={} tf={} tb={} tw={}", p, m, c.tf, c.tb, c.tw));
        const Problem problem = testing::uniform_problem(p, m, c.tf, c.tb, c.tw);
        const double work = m * (c.tf + c.tb + c.tw);
        EXPECT_NEAR(span_of(problem, make_1f1b(problem)) - work, (p - 1) * (c.tf + c.tb + c.tw), 1e-9);
        EXPECT_NEAR(span_of(problem, make_zb_h1(problem)) - work, (p - 1) * (c.tf + c.tb - c.tw), 1e-9);
        EXPECT_NEAR(span_of(problem, make_zb_h2(problem)) - work, (p - 1) * (c.tf + c.tb - 2 * c.tw), 1e-9);
      }
    }
  }
}

TEST(ClosedForms, GPipeMakespanWithCommunication) {
  for (int p : {1, 2, 4, 7}) {
    for (int m : {1, 3, 8}) {
      for (double tc : {0.0, 0.5, 2.0}) {
        SCOPED_TRACE(fmt::format("p={} m={} tc={}", p, m, tc));
        const Problem problem = testing::uniform_problem(p, m, 2, 3, 1, tc);
        const Trace trace = evaluate(problem, make_gpipe(problem));
        EXPECT_NEAR(trace.metrics.makespan, (m + p - 1) * (2.0 + 4.0) + 2 * (p - 1) * tc, 1e-9);
      }
    }
  }
}

TEST(ClosedForms, OneFOneBMakespanWithoutCommunication) {
  for (int p : {1, 2, 4, 7}) {
    for (int m : {p, p + 1, 3 * p}) {
      const Problem problem = testing::uniform_problem(p, m, 2, 3, 1);
      const Trace trace = evaluate(problem, make_1f1b(problem));
      EXPECT_NEAR(trace.metrics.makespan, (m + p - 1) * 6.0, 1e-9) << fmt::format("p={} m={}", p, m);
    }
  }
}

TEST(ClosedForms, HandCheckedCommunicationCases) {
  // docs/design.md section 4: p=5, m=10, costs 7/7/1, t_comm=3: 1F1B bubble 126, not (p-1)*15 = 60... + comm.
  const Problem problem = testing::uniform_problem(5, 10, 7, 7, 1, 3);
  const double work = 10 * 15.0;
  EXPECT_NEAR(span_of(problem, make_1f1b(problem)) - work, 126, 1e-9);
  // p=2, m=2, unit costs, t_comm=1, worked by hand. 1F1B: d0 F0[0,1] F1[1,2]; d1 F0[2,3] BW0[3,5]
  // F1[5,6] BW1[6,8]; d0 BW0[6,8] BW1[9,11]: span 11.
  const Problem small = testing::uniform_problem(2, 2, 1, 1, 1, 1);
  EXPECT_DOUBLE_EQ(span_of(small, make_1f1b(small)), 11);
  // ZB-H1: d1 F0[2,3] B0[3,4] F1[4,5] B1[5,6] W0[6,7] W1[7,8]; d0 F0 F1, B0[5,6] W0[6,7] B1[7,8] W1[8,9].
  EXPECT_DOUBLE_EQ(span_of(small, make_zb_h1(small)), 9);
}

TEST(ClosedForms, ZbH2WithThePapersCosts) {
  // W fills the gaps with the paper's profiled 1.5B costs: (p-1)(t_f + t_b + 2 t_comm - 2 t_w).
  const Costs c{18.522, 18.086, 9.337};
  const double tc = 0.601;
  for (int m : {24, 32, 64}) {
    const Problem problem = testing::uniform_problem(8, m, c.tf, c.tb, c.tw, tc);
    const double work = m * (c.tf + c.tb + c.tw);
    EXPECT_NEAR(span_of(problem, make_zb_h2(problem)) - work, 7 * (c.tf + c.tb + 2 * tc - 2 * c.tw), 1e-6)
        << "m=" << m;
  }
}

TEST(ClosedForms, OrderingWithCommunication) {
  for (int p : {2, 3, 4, 6, 8}) {
    for (int m : {2 * p, 3 * p + 1}) {
      for (const Costs& c : kRegime) {
        for (double tc : {0.1, 0.5, 1.0, 3.0}) {
          SCOPED_TRACE(fmt::format("p={} m={} tf={} tb={} tw={} tc={}", p, m, c.tf, c.tb, c.tw, tc));
          const Problem problem = testing::uniform_problem(p, m, c.tf, c.tb, c.tw, tc);
          const double h2 = span_of(problem, make_zb_h2(problem));
          const double h1 = span_of(problem, make_zb_h1(problem));
          const double f1b1 = span_of(problem, make_1f1b(problem));
          EXPECT_LE(h2, h1 + 1e-9);
          EXPECT_LE(h1, f1b1 + 1e-9);
        }
      }
    }
  }
}

TEST(ClosedForms, PeakActivationMemory) {
  for (int p : {1, 2, 4, 8}) {
    for (int m : {2 * p, 3 * p}) {
      const Problem problem = testing::uniform_problem(p, m, 1, 1, 1);  // mem_f = 1: peaks in M_B
      const double unit = problem.mem_f[0];
      const auto h1 = evaluate(problem, make_zb_h1(problem)).metrics.peak_memory;
      const auto h2 = evaluate(problem, make_zb_h2(problem)).metrics.peak_memory;
      const auto f1b1 = evaluate(problem, make_1f1b(problem)).metrics.peak_memory;
      EXPECT_DOUBLE_EQ(h1[0], p * unit) << p;
      EXPECT_DOUBLE_EQ(f1b1[0], p * unit) << p;
      EXPECT_DOUBLE_EQ(h2[0], (2 * p - 1) * unit) << p;
      for (int d = 0; d < p; ++d) {
        EXPECT_LE(h1[d], p * unit);
        EXPECT_LE(h2[d], (2 * p - 1) * unit);
      }
      const auto gpipe = evaluate(problem, make_gpipe(problem)).metrics.peak_memory;
      EXPECT_DOUBLE_EQ(gpipe[0], m * unit);
    }
  }
}

}  // namespace
}  // namespace zb
