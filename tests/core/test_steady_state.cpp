// Consecutive steps in the evaluator: the optimizer step between them (optimizer_step.h), the
// steady-state period in both modes, rollbacks, and the traces of several steps.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/optimizer_step.h"
#include "sim/formats/trace_json.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

constexpr OptimizerStep kSync{OptimizerMode::sync};
constexpr OptimizerStep kPostValidation{OptimizerMode::post_validation};
constexpr OptimizerStep kEveryRollback{OptimizerMode::post_validation, true};
constexpr OptimizerStep kAwaitVerdict{OptimizerMode::post_validation, false, true};

Trace run(const Problem& problem, const Schedule& schedule, OptimizerStep optimizer, int steps = 3) {
  EvalOptions options;
  options.steps = steps;
  options.optimizer = optimizer;
  return evaluate(problem, schedule, options);
}

double period(const Problem& problem, const Schedule& schedule, OptimizerStep optimizer, int steps = 3) {
  return steady_step_time(run(problem, schedule, optimizer, steps).step_ends);
}

// p = 4, m = 8, unit costs, t_opt = 2, a hop of 0.5.
Problem unit_problem() {
  ProblemSpec spec = testing::uniform_spec(4, 8);
  spec.t_opt = {2};
  spec.t_reduce_hop = 0.5;
  return spec.build();
}

// 1F1B: device d's last BW ends at 33 - 2d. The partial leaves d3 at 27 and reaches d0 (stage 0)
// as it finishes, at 33: sync ready = [35, 35.5, 35.5, 35.5]; device 0 starts step 2 at 35 and
// everyone else waits for its forwards, so the period is makespan + t_opt = 35 (the all-reduce is
// hidden). Post-validation: ready = g + 2 = [35, 33, 31, 29], the same period: device 0 is busy
// from its first F to its last BW. Every step rolling back: max(g + 2, verdict) + 2 = 37 on d0.
TEST(SteadyState, OneFOneBPeriodsByHand) {
  const Problem problem = unit_problem();
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "1f1b", problem);
  const Trace sync = run(problem, schedule, kSync);
  ASSERT_EQ(sync.step_ends.size(), 3U);
  EXPECT_DOUBLE_EQ(sync.step_ends[0], 35.5);
  EXPECT_DOUBLE_EQ(sync.step_ends[1], 70.5);
  EXPECT_DOUBLE_EQ(sync.step_ends[2], 105.5);
  EXPECT_DOUBLE_EQ(steady_step_time(sync.step_ends), 35);
  EXPECT_DOUBLE_EQ(period(problem, schedule, kPostValidation), 35);
  EXPECT_DOUBLE_EQ(period(problem, schedule, kEveryRollback), 37);
  EXPECT_DOUBLE_EQ(expected_post_validation_time(35, 37, 0.25), 35.5);
}

// ZB-H2: every device is busy 24 without a gap, device d from d to 24 + d. Sync: the partial
// leaves d3 at 27 and takes three hops to d0 (28.5), which steps at 30.5 after its update: the
// period is makespan + 3 hops + t_opt = 27 + 1.5 + 2 = 30.5. Post-validation: device d starts
// its next step at 24 + d + 2, just when its first input arrives: the period is the device span
// plus the update, 26. Every step rolling back is sync again (the verdict comes after the early
// update); awaiting the verdict (zbexec) overlaps the update with the all-reduce: 28.5.
TEST(SteadyState, ZbH2PeriodsByHand) {
  const Problem problem = unit_problem();
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "zb-h2", problem);
  const Trace sync = run(problem, schedule, kSync);
  EXPECT_DOUBLE_EQ(sync.step_ends[0], 31);
  EXPECT_DOUBLE_EQ(steady_step_time(sync.step_ends), 30.5);
  const Trace post_validation = run(problem, schedule, kPostValidation);
  EXPECT_DOUBLE_EQ(post_validation.step_ends[0], 29);
  EXPECT_DOUBLE_EQ(steady_step_time(post_validation.step_ends), 26);
  EXPECT_DOUBLE_EQ(period(problem, schedule, kEveryRollback), 30.5);
  EXPECT_DOUBLE_EQ(period(problem, schedule, kAwaitVerdict), 28.5);
  // A rollback rate interpolates between the two.
  EXPECT_DOUBLE_EQ(expected_post_validation_time(26, 30.5, 0), 26);
  EXPECT_DOUBLE_EQ(expected_post_validation_time(26, 30.5, 0.25), 27.125);
  EXPECT_DOUBLE_EQ(expected_post_validation_time(26, 30.5, 1), 30.5);
}

// One step: the step ends when the last device's update is final, as the single-step models
// always said (sync: after the all-reduce; post-validation: after the device's own gradients).
TEST(SteadyState, OneStepIsTheFirstStepsEnd) {
  const Problem problem = unit_problem();
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "zb-h2", problem);
  EXPECT_DOUBLE_EQ(period(problem, schedule, kSync, 1), 31);
  EXPECT_DOUBLE_EQ(period(problem, schedule, kPostValidation, 1), 29);
  const StepBoundary boundary = step_boundary(problem, {24, 25, 26, 27}, kSync);
  EXPECT_EQ(boundary.verdict, (std::vector<double>{28.5, 29, 29, 29}));
  EXPECT_EQ(boundary.ready, (std::vector<double>{30.5, 31, 31, 31}));
}

// The all-reduce follows the stages, not the devices: in a V, stage 2p-1 is on device 0, the
// chain runs d0 -> d1 -> ... -> d(p-1) (the turn costs no hop) -> ... -> d0, then the verdicts.
TEST(SteadyState, TheAllReduceFollowsTheStages) {
  ProblemSpec spec = testing::v_spec(3, 6, 1, 1, 1);
  spec.t_reduce_hop = 1;
  const Problem problem = spec.build();
  EXPECT_EQ(all_reduce_hops(problem),
            (std::vector<std::pair<int, int>>{{0, 1}, {1, 2}, {2, 1}, {1, 0}, {0, 1}, {0, 2}}));
  const StepBoundary boundary = step_boundary(problem, {10, 10, 10}, kSync);
  EXPECT_EQ(boundary.verdict, (std::vector<double>{14, 15, 15}));
}

// A trace of N steps holds every step's spans, marked with their step; the metrics are the first
// step's, as with one step; the memory comes back to zero after each step.
TEST(SteadyState, TracesHoldEveryStep) {
  const Problem problem = unit_problem();
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "zb-h1", problem);
  const Trace one = evaluate(problem, schedule);
  const Trace three = run(problem, schedule, kPostValidation);
  ASSERT_EQ(three.spans.size(), 3 * one.spans.size());
  std::size_t i = 0;
  for (int d = 0; d < 4; ++d) {
    for (int step = 0; step < 3; ++step) {
      for (std::size_t k = 0; k < schedule.devices[static_cast<std::size_t>(d)].size(); ++k, ++i) {
        EXPECT_EQ(three.spans[i].step, step);
        EXPECT_EQ(three.spans[i].device, d);
      }
    }
  }
  EXPECT_DOUBLE_EQ(three.metrics.makespan, one.metrics.makespan);
  EXPECT_DOUBLE_EQ(three.metrics.span, one.metrics.span);
  EXPECT_EQ(three.metrics.peak_memory, one.metrics.peak_memory);
  EXPECT_NEAR(three.memory[0].back().value, 0, 1e-12);
  EXPECT_EQ(three.memory[0].size(), 3 * (one.memory[0].size() - 1) + 1);
  // The trace file keeps the steps; its reader recomputes the first step's metrics.
  const Trace back = trace_from_json(to_json(three), "three steps");
  EXPECT_EQ(back.step_ends, three.step_ends);
  EXPECT_EQ(back.spans.back().step, 2);
  EXPECT_DOUBLE_EQ(back.metrics.span, one.metrics.span);
}

// Which mode a schedule normally runs with: post-validation where B and W are split.
TEST(SteadyState, NormalModeOfEveryBuiltinGenerator) {
  const GeneratorRegistry registry = GeneratorRegistry::with_builtins();
  for (const std::string& name : registry.names()) {
    const GeneratorInfo& info = registry.get(name);
    const Problem problem = testing::generator_spec(info, testing::uniform_spec(4, 8)).build();
    const bool zero_bubble = name.starts_with("zb-") || name.starts_with("v-") || name.starts_with("dualpipe") ||
                             name.starts_with("gis") || name.starts_with("po-");
    EXPECT_EQ(normal_optimizer_mode(generate(registry, name, problem)),
              zero_bubble ? OptimizerMode::post_validation : OptimizerMode::sync)
        << name;
  }
}

// On random problems and every built-in generator: the steady state is reached by the second
// step (three steps and eight give one period), post-validation is never slower than sync nor
// than awaiting the verdict, and a rollback on every step is never faster than sync.
TEST(SteadyState, RandomProblemsReachTheSteadyStateAndKeepTheOrderOfTheModes) {
  std::mt19937 random(14);
  std::uniform_real_distribution<double> cost(0.5, 2.0), small(0.0, 0.6);
  const GeneratorRegistry registry = GeneratorRegistry::with_builtins();
  for (int trial = 0; trial < 12; ++trial) {
    const int p = 2 + trial % 4;
    ProblemSpec base = testing::uniform_spec(p, 2 * p + trial % 3);
    base.t_f.clear();
    base.t_opt.clear();
    for (int d = 0; d < p; ++d) {
      base.t_f.push_back(cost(random));
      base.t_opt.push_back(small(random));
    }
    base.t_b = {cost(random)};
    base.t_w = {cost(random)};
    base.t_comm = {small(random)};
    base.t_reduce_hop = small(random);
    for (const std::string& name : registry.names()) {
      const GeneratorInfo& info = registry.get(name);
      const Problem problem = testing::generator_spec(info, base).build();
      Schedule schedule;
      try {
        schedule = generate(registry, name, problem);
      } catch (const InputError&) {
        continue;  // a shape this generator does not make (e.g. dualpipe-v needs m >= 2p)
      }
      const double sync = period(problem, schedule, kSync);
      const double post_validation = period(problem, schedule, kPostValidation);
      const double tolerance = 1e-9 * sync;
      for (const OptimizerStep mode : {kSync, kPostValidation, kEveryRollback, kAwaitVerdict}) {
        EXPECT_NEAR(period(problem, schedule, mode), period(problem, schedule, mode, 8), tolerance)
            << name << " trial " << trial << " " << optimizer_mode_name(mode.mode);
      }
      EXPECT_LE(post_validation, sync + tolerance) << name << " trial " << trial;
      EXPECT_LE(post_validation, period(problem, schedule, kAwaitVerdict) + tolerance) << name << " trial " << trial;
      EXPECT_GE(period(problem, schedule, kEveryRollback), sync - tolerance) << name << " trial " << trial;
    }
  }
}

}  // namespace
}  // namespace zb
