// The greedy ZB-V: the official runtime's outputs (../shared/V-SCHEDULES.md), and on random
// problems a valid schedule under the limit whose own bubble accounting agrees with the evaluator.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/validator.h"
#include "sim/solver/detail/time_grid.h"
#include "sim/solver/detail/zb_v_greedy.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

using testing::v_problem;

// The largest per-device idle time between its first start and its last end, by the evaluator.
double evaluated_worst_bubble(const Problem& problem, const Schedule& schedule) {
  const Trace trace = evaluate(problem, schedule);
  double worst = 0;
  for (int d = 0; d < problem.devices; ++d) {
    worst = std::max(worst, trace.metrics.device_span[static_cast<std::size_t>(d)] - problem.device_work(d));
  }
  return worst;
}

TEST(ZbVGreedy, ZeroBubbleAtOneF1BsMemoryWithUnitCosts) {
  const Problem problem = v_problem(4, 8, 1, 1, 1);
  const ZbVResult result = zb_v_greedy(problem);
  EXPECT_DOUBLE_EQ(result.memory_limit, 4.0);  // default p * M_B = 2p chunk activations of 1/2
  EXPECT_DOUBLE_EQ(result.worst_bubble, 0.0);
  ASSERT_TRUE(check_schedule(problem, result.schedule).ok()) << check_schedule(problem, result.schedule).message();
  const Trace trace = evaluate(problem, result.schedule);
  EXPECT_DOUBLE_EQ(trace.metrics.span, 2 * 8 * 3.0);
  EXPECT_DOUBLE_EQ(*std::max_element(trace.metrics.peak_memory.begin(), trace.metrics.peak_memory.end()), 4.0);
}

// Official: p=4 m=12, per-chunk (5, 6, 4), t_comm 1: candidates TT 26, TF 24, FT 26, FF 24; the
// first strictly smallest (TF) is kept, 24 of 360 (rate 24 / 384 = 0.0625).
TEST(ZbVGreedy, TheFourCandidatesMatchTheOfficialScheduler) {
  const Problem problem = v_problem(4, 12, 5, 6, 4, 1);
  const double limit = zb_v_memory_limit(problem);
  struct Case {
    ZbVFill fill;
    double bubble;
  };
  for (const Case& c : {Case{{true, true}, 26}, Case{{true, false}, 24}, Case{{false, true}, 26},
                        Case{{false, false}, 24}}) {
    const auto candidate = zb_v_candidate(problem, limit, c.fill);
    ASSERT_TRUE(candidate.has_value());
    EXPECT_DOUBLE_EQ(candidate->worst_bubble, c.bubble) << c.fill.before_b << c.fill.before_f;
  }
  const ZbVResult best = zb_v_greedy(problem);
  EXPECT_DOUBLE_EQ(best.worst_bubble, 24);
  EXPECT_TRUE(best.fill.before_b);
  EXPECT_FALSE(best.fill.before_f);
  ASSERT_TRUE(check_schedule(problem, best.schedule).ok()) << check_schedule(problem, best.schedule).message();
  EXPECT_DOUBLE_EQ(evaluated_worst_bubble(problem, best.schedule), 24);
  const Trace trace = evaluate(problem, best.schedule);
  EXPECT_DOUBLE_EQ(problem.work(), 360);
  EXPECT_NEAR(trace.metrics.bubble_rate, 0.0625, 1e-12);
}

TEST(ZbVGreedy, RandomProblemsGiveValidSchedulesUnderTheLimit) {
  std::mt19937 rng(20261201);  // fixed seed: the same cases every run
  std::uniform_real_distribution<double> cost(0.5, 3.0);
  std::uniform_real_distribution<double> comm(0.0, 0.6);
  std::uniform_real_distribution<double> times_p(0.75, 2.0);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int p = 1 + static_cast<int>(rng() % 8);
    const int m = 1 + static_cast<int>(rng() % static_cast<unsigned>(3 * p));
    ProblemSpec spec = testing::v_spec(p, m, 1, 1, 1);
    testing::draw_stage_costs(spec, rng, cost);
    spec.t_comm = {comm(rng)};
    spec.mem_limit = MemoryLimit{times_p(rng), true};
    const Problem problem = spec.build();
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " p=" << p << " m=" << m << " limit "
                                    << problem.mem_limit->to_string());
    ZbVResult result;
    try {
      result = zb_v_greedy(problem);
    } catch (const ScheduleError&) {
      continue;  // a limit too small for the warm-up: refused with a message, checked below
    } catch (const Error& e) {
      ADD_FAILURE() << e.what() << " limit " << *problem.memory_limit() << " comm " << spec.t_comm[0];
      continue;
    }
    ++checked;
    const ValidationReport report = check_schedule(problem, result.schedule);
    ASSERT_TRUE(report.ok()) << report.message();
    // Its clock is the evaluator's on the time grid: the bubble it minimised is the one users see,
    // within half a grid step per pass (each cost is rounded once to the grid).
    const double rounding = 0.5 * TimeGrid(problem).step() * 6 * m * p;
    EXPECT_NEAR(evaluated_worst_bubble(problem, result.schedule), result.worst_bubble, rounding);
  }
  EXPECT_GT(checked, 200);
}

// A B that allocates (the executor's model: B adds the input gradient before W frees the rest, so
// mem_b > 0) on top of the 2p chunk activations ZB-V holds. The shape and memory of a calibrated
// p=2 run (zbexec calibrate --layers 8 --hidden 256 --microbatch-size 16), costs in ms as measured,
// and the same memory at unit costs: both fit 1F1B's memory, p * M_B, the default limit.
TEST(ZbVGreedy, FitsOneF1BsMemoryWhenTheBackwardAllocates) {
  ProblemSpec calibrated = testing::v_spec(2, 8, 1, 1, 1);
  calibrated.t_f = {42.3295, 30.5247, 26.0035, 38.4194};
  calibrated.t_b = {1.7716, 26.2909, 25.9364, 30.0732};
  calibrated.t_w = {8.1838, 26.3003, 30.3866, 38.4901};
  calibrated.t_comm = {0.0058};
  ProblemSpec unit = testing::v_spec(4, 12, 1, 1, 1);
  for (ProblemSpec* spec : {&calibrated, &unit}) {
    const int stages = 2 * spec->devices;
    spec->mem_f.assign(static_cast<std::size_t>(stages), 294912);
    spec->mem_b.assign(static_cast<std::size_t>(stages), 32768);
    spec->mem_f.back() = 311296;  // the last stage also keeps the loss gradient
    spec->mem_b.back() = 16384;
    spec->mem_w.assign(static_cast<std::size_t>(stages), -327680);
    const Problem problem = spec->build();
    SCOPED_TRACE(::testing::Message() << "p=" << problem.devices);
    const ZbVResult result = zb_v_greedy(problem);
    EXPECT_DOUBLE_EQ(result.memory_limit, problem.devices * problem.activation_unit());
    const ValidationReport report = check_schedule(problem, result.schedule);
    ASSERT_TRUE(report.ok()) << report.message();
    const Trace trace = evaluate(problem, result.schedule);
    for (double peak : trace.metrics.peak_memory) EXPECT_LE(peak, result.memory_limit * (1 + 1e-9));
  }
  // Random per-stage costs and a B that allocates up to half a chunk activation: at 1F1B's memory
  // every problem from p = 2 gets a valid schedule under the limit. (At p = 1 none exists: the
  // device's chunk-1 B needs both chunks' activations, all of M_B, and adds to them.)
  std::mt19937 rng(20261202);  // fixed seed: the same cases every run
  std::uniform_real_distribution<double> cost(0.5, 3.0);
  std::uniform_real_distribution<double> share(0.0, 0.5);
  for (int trial = 0; trial < 50; ++trial) {
    const int p = 2 + static_cast<int>(rng() % 7);
    const int m = 1 + static_cast<int>(rng() % static_cast<unsigned>(3 * p));
    ProblemSpec spec = testing::v_spec(p, m, 1, 1, 1);
    spec.t_f.clear();
    spec.t_b.clear();
    spec.t_w.clear();
    spec.mem_f.clear();
    spec.mem_b.clear();
    spec.mem_w.clear();
    for (int s = 0; s < 2 * p; ++s) {
      spec.t_f.push_back(cost(rng));
      spec.t_b.push_back(cost(rng));
      spec.t_w.push_back(cost(rng));
      spec.mem_f.push_back(1 + share(rng));
      spec.mem_b.push_back(share(rng));
      spec.mem_w.push_back(-spec.mem_f.back() - spec.mem_b.back());
    }
    const Problem problem = spec.build();
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " p=" << p << " m=" << m);
    const ZbVResult result = zb_v_greedy(problem);
    const ValidationReport report = check_schedule(problem, result.schedule);
    ASSERT_TRUE(report.ok()) << report.message();
    const Trace trace = evaluate(problem, result.schedule);
    for (double peak : trace.metrics.peak_memory) EXPECT_LE(peak, result.memory_limit * (1 + 1e-9));
  }
}

TEST(ZbVGreedy, ALimitTooSmallIsRefusedNamingIt) {
  ProblemSpec spec = testing::v_spec(4, 8, 1, 1, 1);
  spec.mem_limit = MemoryLimit{0.1, true};
  const Problem problem = spec.build();
  try {
    zb_v_greedy(problem);
    FAIL() << "expected a ScheduleError";
  } catch (const ScheduleError& e) {
    EXPECT_NE(std::string(e.what()).find("memory limit 0.4"), std::string::npos) << e.what();
  }
}

TEST(ZbVGreedy, NeedsTheVPlacement) {
  EXPECT_THROW(zb_v_greedy(testing::uniform_problem(4, 8, 1, 1, 1, 0, 2)), InputError);
  EXPECT_THROW(zb_v_greedy(testing::uniform_problem(4, 8, 1, 1, 1)), InputError);
}

}  // namespace
}  // namespace zb
