// What the executor refuses before running, and how a failure while running is reported.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exec/cli/backends.h"
#include "exec/runtime/exec_error.h"
#include "tests/exec/exec_test_support.h"
#include "sim/support/error.h"
#include "sim/core/schedule.h"

namespace zb::exec {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string error_of(const zb::Problem& problem, const zb::Schedule& schedule, ExecOptions options) {
  CpuBackend backend(problem.devices);
  try {
    run_schedule(backend, problem, schedule, options);
  } catch (const zb::Error& error) {
    return error.what();
  }
  return "";
}

TEST(ExecRefusals, ADeadlockingScheduleIsRefusedWithTheGridReport) {
  // d1 wants F1 first, which d0 only sends after B0, which needs d1's B0: a cycle.
  const zb::Schedule schedule = zb::parse_schedule_text(
      "d0: F0 B0 W0 F1 B1 W1\nd1: F1 B1 W1 F0 B0 W0\n", "deadlock.txt");
  const zb::Problem problem = test::unit_problem(2, 2);
  CpuBackend backend(2);
  EXPECT_THROW(run_schedule(backend, problem, schedule, test::small_options(2)), zb::ScheduleError);
  EXPECT_THAT(error_of(problem, schedule, test::small_options(2)),
              AllOf(HasSubstr("deadlock"), HasSubstr("<-- here")));
}

// Valid for the validator, but stage 1 takes F1 before F0 while stage 0 sends F0 first.
zb::Schedule reordered() {
  return zb::parse_schedule_text("d0: F0 F1 B0 W0 B1 W1\nd1: F1 B1 W1 F0 B0 W0\n", "reordered.txt");
}

TEST(ExecRefusals, ChannelOrderIsCheckedBeforeRunning) {
  EXPECT_THAT(error_of(test::unit_problem(2, 2), reordered(), test::small_options(2)),
              AllOf(HasSubstr("channels deliver in order"), HasSubstr("stage 1 consumes activations (F) in the order [1, 0]"),
                    HasSubstr("stage 0 sends them in the order [0, 1]")));
}

TEST(ExecRefusals, AMismatchedMicrobatchOnAChannelStopsEveryDevice) {
  // Without the pre-check the channel's own check on receipt catches it: device 1's F1 receives
  // microbatch 0. Device 0 then waits for a gradient that never comes; the run must still end.
  ExecOptions options = test::small_options(2);
  options.check_channel_order = false;
  const std::string error = error_of(test::unit_problem(2, 2), reordered(), options);
  EXPECT_THAT(error, AllOf(HasSubstr("device 1, step 0, action #0 (F1 on stage 1)"),
                           HasSubstr("mismatched message on channel stage 0 -> 1"),
                           HasSubstr("expected the activation of stage 0 -> 1, microbatch 1"),
                           HasSubstr("received the activation of stage 0 -> 1, microbatch 0")));
}

TEST(ExecRefusals, BadShapesAreInputErrors) {
  const zb::Problem problem = test::unit_problem(4, 8);
  const zb::Schedule schedule = test::make("1f1b", problem);
  CpuBackend backend(4);
  EXPECT_THROW(run_schedule(backend, problem, schedule, test::small_options(3)), zb::InputError);  // 3 layers < 4 stages
  ExecOptions options = test::small_options(4);
  options.inject_nonfinite = NonfiniteInjection{5, 0};  // step 5 of 3
  EXPECT_THROW(run_schedule(backend, problem, schedule, options), zb::InputError);
  CpuBackend small(2);
  EXPECT_THROW(run_schedule(small, problem, schedule, test::small_options(4)), zb::InputError);
  EXPECT_THROW(parse_injection("1"), zb::InputError);
  EXPECT_THROW(parse_injection("a:2"), zb::InputError);
  EXPECT_EQ(parse_injection("2:3").stage, 3);
  EXPECT_THROW(parse_sync_mode("async"), zb::InputError);
  EXPECT_THROW(make_backend("tpu", 2), zb::InputError);
}

}  // namespace
}  // namespace zb::exec
