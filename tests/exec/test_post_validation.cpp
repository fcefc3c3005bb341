// Post-validation gives exactly the weights of synchronous training: plain steps, a skipped step
// after a non-finite gradient, and clipped steps (both of which make early steps roll back).
#include <gtest/gtest.h>

#include "tests/exec/exec_test_support.h"

namespace zb::exec {
namespace {

struct Shape {
  const char* generator;
  int p, m, chunks;
};

void PrintTo(const Shape& s, std::ostream* out) {
  *out << s.generator << " p=" << s.p << " m=" << s.m << " v=" << s.chunks;
}

class ExecPostValidation : public ::testing::TestWithParam<std::tuple<Shape, OptimizerKind>> {
 protected:
  void SetUp() override {
    const auto& [shape, kind] = GetParam();
    problem_ = test::unit_problem(shape.p, shape.m, shape.chunks,
                                  shape.chunks == 1 ? zb::Placement::linear : zb::Placement::interleaved);
    schedule_ = test::make(shape.generator, problem_);
    options_ = test::small_options(problem_.stages());
    options_.optimizer.kind = kind;
  }

  ExecResult run(SyncMode mode) {
    ExecOptions options = options_;
    options.mode = mode;
    CpuBackend backend(problem_.devices);
    return run_schedule(backend, problem_, schedule_, options);
  }

  // sync == post-validation == reference, bitwise; returns the post-validation run.
  ExecResult expect_identical() {
    const ExecResult sync = run(SyncMode::sync);
    const ExecResult post = run(SyncMode::post_validation);
    EXPECT_EQ(max_abs_difference(sync.weights, post.weights), 0.0);
    EXPECT_EQ(max_abs_difference(sync.weights, test::reference_for(options_, problem_).weights), 0.0);
    for (std::size_t k = 0; k < sync.steps.size(); ++k) {
      EXPECT_TRUE(same_decision(sync.steps[k].decision, post.steps[k].decision)) << "step " << k;
      EXPECT_EQ(sync.steps[k].early_steps, 0);
    }
    return post;
  }

  zb::Problem problem_;
  zb::Schedule schedule_;
  ExecOptions options_;
};

TEST_P(ExecPostValidation, PlainStepsAreTakenEarlyAndNeverRolledBack) {
  const ExecResult post = expect_identical();
  for (const auto& step : post.steps) {
    EXPECT_TRUE(step.decision.apply);
    EXPECT_FALSE(step.decision.clipped);
    EXPECT_EQ(step.early_steps, problem_.stages());
    EXPECT_EQ(step.rollbacks, 0);
  }
}

TEST_P(ExecPostValidation, ANonFiniteGradientSkipsTheStepEverywhere) {
  const int poisoned_stage = problem_.stages() - 1;
  options_.inject_nonfinite = NonfiniteInjection{1, poisoned_stage};
  const ExecResult post = expect_identical();
  EXPECT_TRUE(post.steps[0].decision.apply);
  EXPECT_FALSE(post.steps[1].decision.apply);
  EXPECT_TRUE(post.steps[2].decision.apply);
  // The poisoned stage sees its own NaN and waits; every other stage stepped early and rolls back.
  EXPECT_EQ(post.steps[1].early_steps, problem_.stages() - 1);
  EXPECT_EQ(post.steps[1].rollbacks, problem_.stages() - 1);
  EXPECT_EQ(post.steps[2].rollbacks, 0);
}

TEST_P(ExecPostValidation, ClippingMakesEarlyStepsRollBackAndRedo) {
  // A threshold below the global norm of step 0 but above each stage's own norm: every stage
  // steps early (its local check passes) and the global verdict then asks for clipping.
  const double norm = test::reference_for(options_, problem_).steps[0].decision.grad_norm;
  options_.optimizer.clip_norm = 0.9 * norm;
  const ExecResult post = expect_identical();
  EXPECT_TRUE(post.steps[0].decision.clipped);
  EXPECT_LT(post.steps[0].decision.grad_scale, 1.0f);
  EXPECT_GT(post.steps[0].rollbacks, 0);
  EXPECT_EQ(post.steps[0].rollbacks, post.steps[0].early_steps);
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, ExecPostValidation,
    ::testing::Combine(::testing::Values(Shape{"zb-h1", 4, 8, 1}, Shape{"1f1b", 3, 5, 1},
                                         Shape{"1f1b-i", 2, 4, 2}),
                       ::testing::Values(OptimizerKind::adamw, OptimizerKind::sgd)),
    [](const auto& param_info) {
      std::string name = std::get<0>(param_info.param).generator;
      for (char& c : name) {
        if (c == '-') c = '_';
      }
      return name + (std::get<1>(param_info.param) == OptimizerKind::sgd ? "_sgd" : "_adamw");
    });

}  // namespace
}  // namespace zb::exec
