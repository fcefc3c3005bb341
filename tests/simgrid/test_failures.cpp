// Robustness: deadlocks, memory limits, bad platforms, dying children, silent logs, determinism.
#include <gtest/gtest.h>
#include <gmock/gmock.h>

#include <csignal>
#include <cstdlib>
#include <thread>

#include "tests/simgrid/engine_test_support.h"
#include "sim/support/error.h"
#include "sim/simgrid/detail/fork_runner.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/memory.h"
#include "sim/core/schedule.h"
#include "sim/simgrid/simgrid_engine.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

using ::testing::HasSubstr;

std::string schedule_error(const Problem& problem, const Schedule& schedule, const SimgridOptions& options = {}) {
  try {
    simulate_simgrid(problem, schedule, options);
  } catch (const ScheduleError& error) {
    return error.what();
  }
  return "no ScheduleError";
}

// d0 waits for d1's gradient of microbatch 0 before sending F1, and d1 wants F1 before it
// sends that gradient: both wait forever.
TEST(SimgridFailures, ACrossDeviceDeadlockNamesTheStuckDevicesAndWhatTheyWaitFor) {
  const Problem problem = testing::uniform_problem(2, 2, 1, 1, 1, 0.5);
  const Schedule schedule = parse_schedule_text("d0: F0 BW0 F1 BW1\nd1: F0 F1 BW0 BW1\n", "crossed");
  const std::string message = schedule_error(problem, schedule);
  EXPECT_THAT(message, HasSubstr("schedule 'crossed' deadlocks"));
  EXPECT_THAT(message, HasSubstr("d0 at step 1 (BW0, stage 0): waits for the gradient of microbatch 0 from stage 1 on d1"));
  EXPECT_THAT(message, HasSubstr("d1 at step 1 (F1, stage 1): waits for the activation of microbatch 1 from stage 0 on d0"));
  EXPECT_THAT(message, HasSubstr("<-- here"));  // the step grid
}

TEST(SimgridFailures, ADeadlockOnAClusterWithSendStreamsIsReportedToo) {
  const Problem problem = testing::uniform_problem(2, 2, 1, 1, 1);
  ClusterSpec cluster;
  cluster.nodes = 2;
  cluster.gpus_per_node = 1;
  cluster.gpu_tflops = 10;
  cluster.intra_node = {100, 1};
  cluster.inter_node = {10, 5};
  SimgridOptions options;
  options.cluster = cluster;
  const Schedule schedule = parse_schedule_text("d0: F0 BW0 F1 BW1\nd1: F0 F1 BW0 BW1\n", "crossed");
  const std::string message = schedule_error(problem, schedule, options);
  EXPECT_THAT(message, HasSubstr("d0 at step 1 (BW0, stage 0): waits for the gradient of microbatch 0"));
  EXPECT_THAT(message, HasSubstr("d1 at step 1 (F1, stage 1): waits for the activation of microbatch 1"));
}

TEST(SimgridFailures, AnInputScheduledLaterOnTheSameDeviceIsADeadlock) {
  const Problem problem = testing::uniform_problem(2, 1, 1, 1, 1);
  const std::string message = schedule_error(problem, parse_schedule_text("d0: F0 B0 W0\nd1: W0 F0 B0\n", "late"));
  EXPECT_THAT(message, HasSubstr("d1 at step 0 (W0, stage 1): its input is produced later on the same device"));
  // d0 is stuck too, waiting for a gradient that never comes.
  EXPECT_THAT(message, HasSubstr("d0 at step 1 (B0, stage 0)"));
}

// Engines never refuse an over-limit schedule: they run it and report its peaks, and the one
// judgement (first_over_limit) gives every front end the same status.
TEST(SimgridFailures, AScheduleOverTheMemoryLimitRunsAndItsPeakIsJudgedAsByTheEvaluator) {
  ProblemSpec spec = testing::uniform_spec(4, 8, 1, 1, 1);
  spec.mem_limit = MemoryLimit::parse("1p", "test");
  const Problem problem = spec.build();
  const Schedule gpipe = generate(GeneratorRegistry::with_builtins(), "gpipe", problem);
  const Trace simulated = simulate_simgrid(problem, gpipe);
  EXPECT_EQ(simulated.metrics.peak_memory, evaluate(problem, gpipe).metrics.peak_memory);
  const auto over = first_over_limit(problem, simulated.metrics.peak_memory);
  ASSERT_TRUE(over.has_value());
  EXPECT_EQ(over->reason(), "d0 peaks at 8 > limit 4 (1p)");
}

TEST(SimgridFailures, TheIdealNetworkNeedsOneLatencyPerDevicePair) {
  ProblemSpec spec = testing::uniform_spec(2, 2, 1, 1, 1, 0, 2);
  spec.t_comm = {0.5, 0.7, 0.5, 0.5};  // boundaries 0->1 and 2->3 both go d0 -> d1, but differ from 1->2 backward
  const Problem problem = spec.build();
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "1f1b-i", problem);
  try {
    simulate_simgrid(problem, schedule);
    FAIL() << "accepted two latencies on one device pair";
  } catch (const InputError& error) {
    EXPECT_THAT(error.what(), HasSubstr("one latency per device pair"));
  }
}

TEST(SimgridFailures, AClusterTooSmallOrAUnitlessProblemIsBadInput) {
  ClusterSpec cluster;
  cluster.name = "tiny";
  cluster.nodes = 1;
  cluster.gpus_per_node = 2;
  cluster.gpu_tflops = 10;
  cluster.intra_node = {100, 1};
  SimgridOptions options;
  options.cluster = cluster;
  const Problem four = testing::uniform_problem(4, 4, 1, 1, 1);
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "1f1b", four);
  EXPECT_THROW(simulate_simgrid(four, schedule, options), InputError);
}

TEST(SimgridFailures, SimGridStaysSilentUnlessVerbose) {
  const Problem problem = testing::uniform_problem(2, 2, 1, 1, 1, 0.5);
  const Schedule crossed = parse_schedule_text("d0: F0 BW0 F1 BW1\nd1: F0 F1 BW0 BW1\n", "crossed");
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  EXPECT_THROW(simulate_simgrid(problem, crossed), ScheduleError);  // SimGrid logs a deadlock as CRITICAL
  EXPECT_NO_THROW(simulate_simgrid(problem, generate(GeneratorRegistry::with_builtins(), "1f1b", problem)));
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");

  SimgridOptions verbose;
  verbose.verbose = true;
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(simulate_simgrid(problem, generate(GeneratorRegistry::with_builtins(), "1f1b", problem), verbose));
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("network/model"));
}

TEST(SimgridFailures, ManySimulationsInOneProcessGiveIdenticalResults) {
  // One Engine per child: the clock starts at 0 every time and nothing leaks between runs.
  const Problem problem = testing::uniform_problem(4, 8, 1.0, 1.1, 0.9, 0.3);
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "zb-h2", problem);
  const Trace first = simulate_simgrid(problem, schedule);
  for (int i = 0; i < 5; ++i) {
    const Trace again = simulate_simgrid(problem, schedule);
    ASSERT_EQ(again.spans.size(), first.spans.size());
    for (std::size_t s = 0; s < first.spans.size(); ++s) {
      ASSERT_EQ(again.spans[s].start, first.spans[s].start);  // bit for bit
      ASSERT_EQ(again.spans[s].end, first.spans[s].end);
    }
  }
}

// Sweeps may simulate from several threads at once: every child gets its own pipe and engine.
TEST(SimgridFailures, SimulationsFromSeveralThreadsAtOnce) {
  const Problem problem = testing::uniform_problem(4, 12, 1.0, 1.1, 0.9, 0.3);
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "zb-h1", problem);
  const double expected = simulate_simgrid(problem, schedule).metrics.makespan;
  std::vector<double> makespans(4 * 5, 0.0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 5; ++i) makespans[static_cast<std::size_t>(t * 5 + i)] = simulate_simgrid(problem, schedule).metrics.makespan;
    });
  }
  for (auto& thread : threads) thread.join();
  for (const double makespan : makespans) EXPECT_EQ(makespan, expected);
}

TEST(ForkRunner, CarriesBytesAndErrorTypesBack) {
  const std::string big(5'000'000, 'x');  // larger than a pipe buffer
  EXPECT_EQ(engine::simulate_in_child([&] { return big; }, true), big);
  EXPECT_THROW(engine::simulate_in_child([]() -> std::string { throw ScheduleError("stuck"); }, true), ScheduleError);
  EXPECT_THROW(engine::simulate_in_child([]() -> std::string { throw InputError("bad"); }, true), InputError);
  try {
    engine::simulate_in_child([]() -> std::string { throw std::runtime_error("boom"); }, true);
    FAIL();
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("internal failure: boom"));
  }
}

TEST(ForkRunner, AChildThatDiesBecomesAnErrorNamingTheSignal) {
  try {
    engine::simulate_in_child([]() -> std::string { std::abort(); }, true);
    FAIL();
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("signal 6"));
  }
  try {
    engine::simulate_in_child([]() -> std::string { std::_Exit(3); }, true);
    FAIL();
  } catch (const Error& error) {
    EXPECT_THAT(error.what(), HasSubstr("status 3"));
  }
}

}  // namespace
}  // namespace zb
