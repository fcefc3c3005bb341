// zb-1p-official / zb-2p-official: the official runtime's planning costs and the schedule it picks.
#include <gtest/gtest.h>

#include "sim/core/evaluator.h"
#include "sim/core/generators/generators.h"
#include "sim/core/validator.h"
#include "sim/solver/detail/greedy_schedule.h"
#include "sim/solver/detail/official_runtime.h"
#include "sim/solver/solver_registry.h"
#include "sim/support/error.h"
#include "tests/solver/solver_test_support.h"

namespace zb {
namespace {

// The paper's GPT 1.5B at p=8, m=24 as the cost model gives it (scenarios/models/
// paper-gpt-1.5b-p8-m24.json, rounded): a light first stage, a heavy last one (the output layer).
Problem paper_1_5b() {
  ProblemSpec spec;
  spec.devices = 8;
  spec.microbatches = 24;
  spec.t_f = {10.32, 15.32, 15.32, 15.32, 15.32, 15.32, 15.32, 18.67};
  spec.t_b = {11.58, 17.37, 17.37, 17.37, 17.37, 17.37, 17.37, 19.40};
  spec.t_w = {7.68, 11.25, 11.25, 11.25, 11.25, 11.25, 11.25, 14.37};
  spec.t_comm = {0.066};
  spec.mem_f = {2.49, 3.71, 3.71, 3.71, 3.71, 3.71, 3.71, 4.38};
  spec.mem_b = {-1.54, -2.35, -2.35, -2.35, -2.35, -2.35, -2.35, -2.83};
  spec.mem_w = {-0.95, -1.36, -1.36, -1.36, -1.36, -1.36, -1.36, -1.55};
  return spec.build("paper-1.5b");
}

TEST(OfficialRuntime, PlansOnTheStagesUpperMedianAndTheSlowestLink) {
  ProblemSpec spec;
  spec.devices = 4;
  spec.microbatches = 8;
  spec.t_f = {1, 4, 2, 3};  // sorted 1 2 3 4: runtime.py takes sorted[len // 2] = 3
  spec.t_b = {2, 2, 5, 2};
  spec.t_w = {1, 1, 1, 9};
  spec.t_comm = {0.5, 2, 1, 0.7};
  const Problem problem = spec.build("test");
  const Problem planned = official_runtime_planning_problem(problem);
  EXPECT_EQ(planned.t_f, (std::vector<double>{3, 3, 3, 3}));
  EXPECT_EQ(planned.t_b, (std::vector<double>{2, 2, 2, 2}));
  EXPECT_EQ(planned.t_w, (std::vector<double>{1, 1, 1, 1}));
  EXPECT_EQ(planned.t_comm, std::vector<double>(problem.t_comm.size(), 2));
  EXPECT_EQ(planned.mem_f, problem.mem_f);  // memory stays per stage, as the runtime measures it
}

TEST(OfficialRuntime, EqualCostsGiveTheBestOfTheEightVariants) {
  const Problem problem = test::make_problem(4, 8, 1, 1, 1, 0, 8);
  double best = 0;
  for (const GreedySwitches& switches : greedy_variants()) {
    if (auto run = greedy_variant(problem, 4 * problem.activation_unit(), switches)) {
      if (best == 0 || run->span < best) best = run->span;
    }
  }
  EXPECT_DOUBLE_EQ(evaluate(problem, official_runtime_schedule(problem, 1)).metrics.span, best);
}

// What the hidden-table observation was about: on the paper's 1.5B stage costs zbsim's own zb-1p
// reaches the 2p span (the last stage is the bottleneck and zb-auto's search plans on the true
// costs), while the runtime, planning on uniform median costs, is measurably slower at 1p and
// catches up at 2p. Both stay within their memory limits on the true costs.
TEST(OfficialRuntime, OnThePapersStageCostsOnePIsSlowerThanTwoP) {
  const Problem problem = paper_1_5b();
  GeneratorRegistry registry;
  register_solver_generators(registry);
  const Schedule one = generate(registry, "zb-1p-official", problem);
  const Schedule two = generate(registry, "zb-2p-official", problem);
  EXPECT_EQ(one.name, "zb-1p-official");
  for (int times_p : {1, 2}) {
    Problem limited = problem;
    limited.mem_limit = MemoryLimit{static_cast<double>(times_p), true};
    const ValidationReport report = check_schedule(limited, times_p == 1 ? one : two);
    EXPECT_TRUE(report.ok()) << times_p << "p: " << report.message();
  }
  const double official_1p = evaluate(problem, one).metrics.span;
  const double official_2p = evaluate(problem, two).metrics.span;
  const double ours_1p = evaluate(problem, generate(registry, "zb-1p", problem)).metrics.span;
  EXPECT_GT(official_1p, official_2p * 1.02);
  EXPECT_LT(ours_1p, official_1p);
  EXPECT_NEAR(official_2p, ours_1p, 1e-6 * ours_1p);
}

TEST(OfficialRuntime, RefusesMoreThanOneChunkPerDevice) {
  ProblemSpec spec;
  spec.devices = 4;
  spec.microbatches = 8;
  spec.chunks = 2;
  spec.t_f = {1};
  spec.t_b = {1};
  spec.t_w = {1};
  EXPECT_THROW(official_runtime_planning_problem(spec.build("two chunks")), InputError);
}

}  // namespace
}  // namespace zb
