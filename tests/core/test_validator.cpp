// The validator catches missing actions, wrong order, deadlocks and memory over the limit.
#include <gtest/gtest.h>

#include "sim/support/error.h"
#include "sim/core/generators/generators.h"
#include "sim/core/schedule.h"
#include "tests/testing/problems.h"
#include "sim/core/validator.h"

namespace zb {
namespace {

std::string errors_of(const Problem& problem, const Schedule& schedule) {
  return check_schedule(problem, schedule).message();
}

TEST(Validator, AcceptsGeneratedSchedules) {
  const Problem problem = testing::uniform_problem(4, 8, 1, 1, 1);
  EXPECT_TRUE(check_schedule(problem, make_zb_h1(problem)).ok());
  EXPECT_NO_THROW(validate(problem, make_zb_h2(problem)));
}

TEST(Validator, MissingAction) {
  const Problem problem = testing::uniform_problem(4, 8, 1, 1, 1);
  Schedule schedule = make_zb_h1(problem);
  auto& d2 = schedule.devices[2];
  d2.erase(std::find(d2.begin(), d2.end(), Action{Pass::W, 5, 0}));
  const std::string errors = errors_of(problem, schedule);
  EXPECT_NE(errors.find("d2: W5 (stage 2) is missing"), std::string::npos) << errors;
  EXPECT_THROW(validate(problem, schedule), ScheduleError);
}

TEST(Validator, DuplicateAndForeignActions) {
  const Problem problem = testing::uniform_problem(2, 2, 1, 1, 1);
  Schedule schedule = make_1f1b(problem);
  schedule.devices[0].push_back({Pass::F, 1, 0});
  schedule.devices[1].push_back({Pass::F, 9, 0});
  const std::string errors = errors_of(problem, schedule);
  EXPECT_NE(errors.find("d0: F1 (stage 0) appears 2 times"), std::string::npos) << errors;
  EXPECT_NE(errors.find("d1 step 4: F9 is outside the problem"), std::string::npos) << errors;
}

TEST(Validator, WBeforeB) {
  const Problem problem = testing::uniform_problem(4, 8, 1, 1, 1);
  Schedule schedule = make_zb_h1(problem);
  auto& d0 = schedule.devices[0];
  const auto b = std::find(d0.begin(), d0.end(), Action{Pass::B, 3, 0});
  const auto w = std::find(d0.begin(), d0.end(), Action{Pass::W, 3, 0});
  std::iter_swap(b, w);
  const std::string errors = errors_of(problem, schedule);
  EXPECT_NE(errors.find("d0: W3 at step"), std::string::npos) << errors;
  EXPECT_NE(errors.find("comes before its B3"), std::string::npos) << errors;
}

TEST(Validator, CrossDeviceDeadlockShowsTheGrid) {
  const Problem problem = testing::uniform_problem(2, 2, 1, 1, 1);
  // Each device's order is fine on its own, but d0 waits for microbatch 0's gradient before
  // sending F1, while d1 waits for F1 before sending that gradient: a cycle across devices.
  const Schedule schedule =
      parse_schedule_text("d0: F0 B0 W0 F1 B1 W1\nd1: F0 F1 B1 W1 B0 W0\n", "deadlock.txt");
  const ValidationReport report = check_schedule(problem, schedule);
  ASSERT_FALSE(report.ok());
  const std::string errors = report.message();
  EXPECT_NE(errors.find("deadlock"), std::string::npos) << errors;
  EXPECT_NE(errors.find("[B0]"), std::string::npos) << errors;
  EXPECT_NE(errors.find("<-- here: B0 waits for the backward of microbatch 0 from stage 1 on d1"),
            std::string::npos)
      << errors;
  EXPECT_NE(errors.find("[F1]"), std::string::npos) << errors;
  EXPECT_NE(errors.find("<-- here: F1 waits for F1 of stage 0 on d0"), std::string::npos) << errors;
}

TEST(Validator, MemoryOverTheLimit) {
  ProblemSpec spec;
  spec.devices = 4;
  spec.microbatches = 8;
  spec.t_f = spec.t_b = spec.t_w = {1.0};
  spec.mem_limit = MemoryLimit::parse("1p", "test");
  const Problem problem = spec.build();
  EXPECT_TRUE(check_schedule(problem, make_zb_h1(problem)).ok());
  const ValidationReport report = check_schedule(problem, make_zb_h2(problem));
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.message().find("over-limit: d0 peaks at 7 > limit 4 (1p)"), std::string::npos)
      << report.message();
  EXPECT_DOUBLE_EQ(report.peak_memory[0], 7);
  // Callers that report memory as a status skip the limit, and nothing else.
  const ValidationReport skipped = check_schedule(problem, make_zb_h2(problem), MemoryCheck::skip);
  EXPECT_TRUE(skipped.ok()) << skipped.message();
  EXPECT_DOUBLE_EQ(skipped.peak_memory[0], 7);
  Schedule broken = make_zb_h2(problem);
  broken.devices[1].pop_back();
  EXPECT_FALSE(check_schedule(problem, broken, MemoryCheck::skip).ok());
}

// The FIFO-channel rule is the core's, so zbsim and zbexec give one verdict. This schedule runs on
// the evaluator (messages are matched by microbatch there) but stage 1 takes F1 before F0.
TEST(Validator, OutOfOrderChannelsAreRefused) {
  const Problem problem = testing::uniform_problem(2, 2, 1, 1, 1);
  const Schedule reordered = parse_schedule_text("d0: F0 F1 B0 W0 B1 W1\nd1: F1 F0 B1 W1 B0 W0\n", "r.txt");
  const std::string errors = errors_of(problem, reordered);
  EXPECT_NE(errors.find("channels deliver in order (like NCCL send/recv), but stage 1 consumes activations (F) in "
                        "the order [1, 0] while stage 0 sends them in the order [0, 1] (first difference at position 0)"),
            std::string::npos)
      << errors;
  EXPECT_TRUE(check_schedule(problem, reordered, MemoryCheck::against_limit, ChannelCheck::skip).ok());
  // Gradients: stage 0 consumes B1 before B0 while stage 1 sends B0 first.
  const Schedule backward = parse_schedule_text("d0: F0 F1 B1 W1 B0 W0\nd1: F0 B0 W0 F1 B1 W1\n", "b.txt");
  EXPECT_NE(errors_of(problem, backward).find("stage 0 consumes gradients (B/BW) in the order [1, 0]"),
            std::string::npos)
      << errors_of(problem, backward);
}

// The schedule says what it was made for; the same lists under another placement are refused.
TEST(Validator, APlacementOrChunkCountOtherThanTheProblemsIsRefused) {
  Schedule schedule = parse_schedule_text("placement: vshape\nd0: F0 F0.1 BW0.1 BW0\nd1: F0 F0.1 BW0.1 BW0\n", "v.txt");
  ProblemSpec spec = testing::uniform_spec(2, 1, 1, 1, 1, 0, 2);
  spec.placement = Placement::vshape;
  EXPECT_TRUE(check_schedule(spec.build(), schedule).ok()) << errors_of(spec.build(), schedule);
  spec.placement = Placement::interleaved;
  EXPECT_NE(errors_of(spec.build(), schedule).find("made for placement vshape but the problem has placement interleaved"),
            std::string::npos);
  schedule.placement.reset();
  schedule.chunks = 3;
  EXPECT_NE(errors_of(spec.build(), schedule).find("made for chunks=3 but the problem has chunks=2"), std::string::npos);
}

}  // namespace
}  // namespace zb

namespace zb {
namespace {

// Found by fuzz_schedule_file: one stray microbatch index made m huge and the validator asked for
// a table of p*v*m cells (terabytes at m = 10^9, which the size limits now refuse earlier). Below
// those limits a schedule far shorter than its shape is still refused up front, naming the counts.
TEST(Validator, AScheduleFarShorterThanItsShapeIsRefusedWithoutATable) {
  const Schedule schedule = parse_schedule_text("d0: F0 B0 W0 F1999999\n", "stray.txt");
  ProblemSpec spec = testing::uniform_spec(1, 2000000, 1, 1, 1);
  const ValidationReport report = check_schedule(spec.build(), schedule);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.message().find("has 4 actions, but p=1 chunks=1 m=2000000 needs at least 4000000"),
            std::string::npos)
      << report.message();
}

}  // namespace
}  // namespace zb
