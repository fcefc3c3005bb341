// V-Min, V-Half and V-Auto (sim/solver/v_controllable.h): the checks of ../shared/V-SCHEDULES.md.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/schedule/error.h"
#include "sim/schedule/evaluator.h"
#include "sim/schedule/validator.h"
#include "sim/solver/v_controllable.h"
#include "tests/support/problems.h"

namespace zb {
namespace {

// Per-chunk costs on the V placement (ProblemSpec splits per-device values over the two chunks).
// Memory as the paper counts it: one unit per chunk activation, held from F until its W.
Problem v_problem(int p, int m, double f, double b, double w, double tcomm = 0) {
  ProblemSpec spec = testing::uniform_spec(p, m, 2 * f, 2 * b, 2 * w, tcomm, 2);
  spec.placement = Placement::vshape;
  spec.mem_f = {2};
  spec.mem_b = {0};
  spec.mem_w = {-2};
  return spec.build();
}

double largest(const std::vector<double>& values) { return *std::max_element(values.begin(), values.end()); }

struct Outcome {
  double span = 0;
  double bubble = 0;
  double peak = 0;
};

Outcome run(const Problem& problem, const Schedule& schedule) {
  const ValidationReport report = check_schedule(problem, schedule);
  EXPECT_TRUE(report.ok()) << schedule.name << "\n" << report.message();
  const Trace trace = evaluate(problem, schedule);
  return {trace.metrics.span, trace.metrics.bubble_rate, largest(trace.metrics.peak_memory)};
}

TEST(VMin, SpanBubbleAndPeakAtUnitCosts) {
  const Problem problem = v_problem(4, 8, 1, 1, 1);
  const Outcome outcome = run(problem, make_v_min(problem));
  EXPECT_DOUBLE_EQ(outcome.span, 59);
  EXPECT_NEAR(outcome.bubble, 0.1864, 1e-4);
  EXPECT_DOUBLE_EQ(outcome.peak, 4);
  EXPECT_DOUBLE_EQ(run(v_problem(6, 12, 1, 1, 1), make_v_min(v_problem(6, 12, 1, 1, 1))).span, 89);
}

TEST(VHalf, SpanBubbleAndPeakAtUnitCosts) {
  const Problem problem = v_problem(4, 8, 1, 1, 1);
  const Outcome outcome = run(problem, make_v_half(problem));
  EXPECT_DOUBLE_EQ(outcome.span, 53);
  EXPECT_NEAR(outcome.bubble, 0.0943, 1e-4);
  EXPECT_DOUBLE_EQ(outcome.peak, 6);
  EXPECT_DOUBLE_EQ(run(v_problem(6, 12, 1, 1, 1), make_v_half(v_problem(6, 12, 1, 1, 1))).span, 83);
}

}  // namespace
}  // namespace zb
