// Per-stage pass costs read back from a trace: the evaluator's own trace gives back the costs it
// ran on, the median ignores a slow pass that the mean counts, a run of full backwards is costed as
// t_b with t_w 0, and a trace whose stages ran different passes has no costs.
#include <gtest/gtest.h>

#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/measured_costs.h"
#include "sim/core/problem_spec.h"

namespace zb {
namespace {

Problem three_stages() {
  ProblemSpec spec;
  spec.devices = 3;
  spec.microbatches = 6;
  spec.t_f = {1.0, 1.5, 2.0};
  spec.t_b = {2.0, 2.5, 3.0};
  spec.t_w = {0.5, 1.0, 1.25};
  return spec.build("test");
}

TEST(MeasuredCosts, TheEvaluatorsTraceGivesBackItsCosts) {
  const Problem problem = three_stages();
  const Trace trace = evaluate(problem, generate(GeneratorRegistry::with_builtins(), "zb-h1", problem));
  for (const CostStatistic statistic : {CostStatistic::median, CostStatistic::mean}) {
    const auto costs = measured_costs({&trace}, statistic);
    ASSERT_TRUE(costs.has_value());
    EXPECT_TRUE(costs->split_backward);
    EXPECT_EQ(costs->t_f, problem.t_f);
    EXPECT_EQ(costs->t_b, problem.t_b);
    EXPECT_EQ(costs->t_w, problem.t_w);
  }
}

TEST(MeasuredCosts, TheMedianIgnoresASlowPassThatTheMeanCounts) {
  const Problem problem = three_stages();
  Trace trace = evaluate(problem, generate(GeneratorRegistry::with_builtins(), "zb-h1", problem));
  for (Span& span : trace.spans) {
    if (span.stage == 1 && span.pass == Pass::F && span.microbatch == 2) span.end += 6.0;  // one F 6 ms late
  }
  EXPECT_EQ(measured_costs({&trace}, CostStatistic::median)->t_f[1], 1.5);
  EXPECT_DOUBLE_EQ(measured_costs({&trace}, CostStatistic::mean)->t_f[1], 1.5 + 6.0 / 6);
  // Two traces (two steps) are one sample.
  const Trace other = evaluate(problem, generate(GeneratorRegistry::with_builtins(), "zb-h1", problem));
  EXPECT_DOUBLE_EQ(measured_costs({&trace, &other}, CostStatistic::mean)->t_f[1], 1.5 + 6.0 / 12);
}

TEST(MeasuredCosts, AFullBackwardIsTbWithTwZero) {
  const Problem problem = three_stages();
  const Trace trace = evaluate(problem, generate(GeneratorRegistry::with_builtins(), "1f1b", problem));
  const auto costs = measured_costs({&trace}, CostStatistic::median);
  ASSERT_TRUE(costs.has_value());
  EXPECT_FALSE(costs->split_backward);
  EXPECT_EQ(costs->t_b, (std::vector<double>{2.5, 3.5, 4.25}));
  EXPECT_EQ(costs->t_w, (std::vector<double>{0, 0, 0}));
}

TEST(MeasuredCosts, StagesThatRanDifferentPassesHaveNoCosts) {
  const Problem problem = three_stages();
  Trace trace = evaluate(problem, generate(GeneratorRegistry::with_builtins(), "zb-h1", problem));
  std::erase_if(trace.spans, [](const Span& span) { return span.stage == 2 && span.pass == Pass::W; });
  EXPECT_FALSE(measured_costs({&trace}, CostStatistic::median).has_value());
  const Trace empty;
  EXPECT_FALSE(measured_costs({&empty}, CostStatistic::mean).has_value());
}

}  // namespace
}  // namespace zb
