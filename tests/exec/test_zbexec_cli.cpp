// zbexec as a user runs it: help, a verified run with trace files, bad input, calibrate + predict.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "exec/calibration/calibrate.h"
#include "sim/support/atomic_file.h"
#include "sim/formats/trace_json.h"

#include "tests/testing/chrome_trace_check.h"
#include "tests/testing/cli_test.h"

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// The exit code and everything the command printed (stdout and stderr together).
struct Outcome {
  int code = -1;
  std::string output;
};

Outcome zbexec(const std::string& args) {
  const zb::testing::CliRun run = zb::testing::run_merged(ZBEXEC_PATH, args);
  return {run.exit_code, run.out};
}

std::filesystem::path temp_dir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("zbexec_cli_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

TEST(ZbexecCli, HelpShowsAnExample) {
  EXPECT_EQ(zbexec("--help").code, 0);
  const Outcome help = zbexec("run --help");
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.output, AllOf(HasSubstr("example:"), HasSubstr("--verify"), HasSubstr("--inject-nonfinite")));
  EXPECT_EQ(zbexec("calibrate --help").code, 0);
}

TEST(ZbexecCli, AVerifiedRunPrintsLossesWritesTracesAndFindsNoDifference) {
  const auto dir = temp_dir();
  const Outcome run = zbexec("run --backend cpu --schedule zb-h1 --p 2 --m 4 --layers 4 --hidden 32 "
                             "--steps 2 --mode post-validation --verify --trace " + (dir / "t.json").string() +
                             " --chrome " + (dir / "c.json").string() + " --svg " + (dir / "t.svg").string());
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, AllOf(HasSubstr("step 0: loss"), HasSubstr("step 1: loss"),
                                HasSubstr("max |dw| = 0,"), HasSubstr("trace written")));
  const zb::Trace trace = zb::trace_from_json(nlohmann::json::parse(zb::read_file((dir / "t.json").string())), "t.json");
  EXPECT_EQ(trace.meta.engine, "cpu");
  EXPECT_EQ(trace.spans.size(), 2u * 4u * 3u);  // p * m * (F, B, W)
  EXPECT_NE(zb::read_file((dir / "t.svg").string()).find("<svg"), std::string::npos);
  // The Chrome trace holds every measured step, nested and with every flow bound, memory in bytes.
  const auto chrome = nlohmann::json::parse(zb::read_file((dir / "c.json").string()));
  const zb::testing::ChromeTraceCheck check = zb::testing::check_chrome_trace(chrome);
  EXPECT_EQ(check.partial_overlaps + check.unintended_nesting, 0) << check.first_problem;
  EXPECT_EQ(check.unbound_points + check.broken_flows, 0);
  EXPECT_EQ(check.flows, 2 * 1 * 4 * 2);  // both directions x 1 boundary x m x steps
  int compute = 0, steps = 0;
  bool bytes = false;
  for (const auto& event : chrome["traceEvents"]) {
    if (event["ph"] == "X" && event["cat"] == "pipeline") ++compute;
    if (event["ph"] == "X" && event["cat"] == "step") ++steps;
    if (event["ph"] == "C") bytes = bytes || event["args"].contains("(bytes)");
  }
  EXPECT_EQ(compute, 2 * 2 * 4 * 3);  // steps * p * m * (F, B, W)
  EXPECT_EQ(steps, 2 * 2);            // a step slice per device and step
  EXPECT_TRUE(bytes);
}

// Activation offload (issue 30) as a user runs it: po-h's copies go to host memory and back, the
// weights stay the reference's, and the trace's copy spans are on the copy stream.
TEST(ZbexecCli, PoHOffloadsToHostAndStaysBitwise) {
  const auto dir = temp_dir();
  const Outcome run = zbexec("run --backend cpu --schedule po-h --p 4 --m 8 --chunks 2 --layers 8 --hidden 16 "
                             "--steps 2 --t-offload 0.25 --verify --trace " + (dir / "t.json").string());
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("max |dw| = 0,"));
  std::ifstream in(dir / "t.json");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, AllOf(HasSubstr("\"copy\""), HasSubstr("\"O\""), HasSubstr("\"L\"")));
}

// As in zbsim, a generator brings the shape it runs at: the V schedules two chunks in a V, the
// interleaved ones two looped chunks when --chunks is not given.
TEST(ZbexecCli, GeneratorsRunAtTheirOwnShapeWithoutShapeFlags) {
  for (const char* name : {"zb-i", "1f1b-i", "zb-v", "dualpipe-v", "dualpipe", "gis-h", "po-h", "po-f"}) {
    const Outcome run = zbexec(std::string("run --backend cpu --schedule ") + name +
                               " --p 2 --m 4 --layers 4 --hidden 32 --steps 1 --verify");
    EXPECT_EQ(run.code, 0) << name << "\n" << run.output;
    EXPECT_THAT(run.output, HasSubstr("max |dw| = 0,")) << name;
    EXPECT_THAT(run.output, HasSubstr(" v=2 (")) << name << "\n" << run.output;
  }
}

// DualPipe's two model copies, trained bitwise as one model (docs/design.md section 9).
TEST(ZbexecCli, DualPipeRunsItsTwoCopiesBitwise) {
  const Outcome run = zbexec("run --backend cpu --schedule dualpipe --p 4 --m 8 --layers 8 --hidden 64 --steps 2 --verify");
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("(bidirectional)"));
  EXPECT_THAT(run.output, HasSubstr("max |dw| = 0, losses equal"));
}

TEST(ZbexecCli, BadInputExitsWithTwoAndWritesNothing) {
  const auto dir = temp_dir();
  const std::string trace = " --trace " + (dir / "t.json").string();
  for (const std::string args : {"run --p 0", "run --schedule nope", "run --inject-nonfinite x",
                                 "run --p 2 --layers 1", "run --no-such-flag", "run --mode async",
                                 "run --optimizer lbfgs", "run --steps 2 --inject-nonfinite 3:0",
                                 "run --backend tpu", "calibrate --p 2"}) {
    const Outcome outcome = zbexec(args + trace);
    EXPECT_EQ(outcome.code, 2) << args << "\n" << outcome.output;
    EXPECT_THAT(outcome.output, HasSubstr("error:")) << args;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "t.json"));
  EXPECT_THAT(zbexec("run --schedule nope").output, HasSubstr("zb-h1"));  // lists the known names
}

TEST(ZbexecCli, ADeadlockingScheduleFileIsRefusedWithTheGrid) {
  const auto dir = temp_dir();
  std::ofstream(dir / "deadlock.txt") << "d0: F0 B0 W0 F1 B1 W1\nd1: F1 B1 W1 F0 B0 W0\n";
  const Outcome outcome = zbexec("run --p 2 --m 2 --layers 2 --hidden 8 --schedule-file " +
                                 (dir / "deadlock.txt").string());
  EXPECT_EQ(outcome.code, 2) << outcome.output;
  EXPECT_THAT(outcome.output, AllOf(HasSubstr("deadlock"), HasSubstr("<-- here")));
}

TEST(ZbexecCli, APytorchCsvBringsItsOwnShape) {
  const std::string path = std::string(ZB_SOURCE_DIR) + "/tests/data/pytorch/zb1p_2rank_2stagep_compute.csv";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "fixture missing: " << path;
  const auto dir = temp_dir();
  const Outcome run = zbexec("run --schedule-file " + path + " --layers 4 --hidden 16 --steps 2 --verify --svg " +
                             (dir / "t.svg").string());
  EXPECT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, AllOf(HasSubstr("p=2 m=8 v=2 (interleaved)"), HasSubstr("max |dw| = 0,")));
}

// zbexec reads schedule files as zbsim does (one reader, by content, with their shape), and a run
// writes only the files its flags name: none in the current folder (the DualPipeV CSV's default
// timeline name used to contain its path, and the run failed at the end).
TEST(ZbexecCli, ScheduleFilesAreReadAsZbsimReadsThemAndNothingIsWrittenUnasked) {
  const auto dir = temp_dir();
  std::ofstream(dir / "zbh1.txt") << "placement: linear\nchunks: 1\n"
                                     "d0: F0 F1 F2 B0 W0 F3 B1 W1 B2 W2 B3 W3\n"
                                     "d1: F0 F1 B0 F2 B1 W0 F3 B2 W1 B3 W2 W3\n"
                                     "d2: F0 B0 F1 B1 F2 B2 W0 F3 B3 W1 W2 W3\n";
  const std::string in_dir = "cd " + dir.string() + " && " + ZBEXEC_PATH;
  const zb::testing::CliRun text = zb::testing::run_merged(in_dir, "run --schedule-file zbh1.txt --layers 3 --hidden 8 --steps 1 --verify");
  EXPECT_EQ(text.exit_code, 0) << text.out;
  EXPECT_THAT(text.out, AllOf(HasSubstr("p=3 m=4 v=1 (linear)"), HasSubstr("max |dw| = 0,")));
  const std::string csv = std::string(ZB_SOURCE_DIR) + "/tests/data/pytorch/dualpipev_4rank_10mb.csv";
  const zb::testing::CliRun v = zb::testing::run_merged(in_dir, "run --schedule-file " + csv + " --layers 8 --hidden 8 --steps 1 --verify");
  EXPECT_EQ(v.exit_code, 0) << v.out;
  EXPECT_THAT(v.out, AllOf(HasSubstr("p=4 m=10 v=2 (vshape)"), HasSubstr("max |dw| = 0,")));
  // The file says V; an explicit other placement is refused naming both.
  const Outcome conflict = zbexec("run --schedule-file " + csv + " --layers 8 --hidden 8 --placement interleaved");
  EXPECT_EQ(conflict.code, 2) << conflict.output;
  EXPECT_THAT(conflict.output, HasSubstr("the schedule says placement vshape but the problem says placement interleaved"));
  std::filesystem::remove(dir / "zbh1.txt");
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "zbexec run left files in the current folder";
}

// zbexec's shape flags and --mem-limit are made from the table zbsim's problem flags come from:
// the same parsing and the same messages.
TEST(ZbexecCli, ShapeFlagsAreZbsimsProblemFlags) {
  const std::string zbsim = std::string(ZB_BINARY_DIR) + "/sim/cli/zbsim";
  if (!std::filesystem::exists(zbsim)) GTEST_SKIP() << "zbsim not built";
  for (const std::string args : {"--p x", "--m 1.5", "--placement diagonal", "--mem-limit 2q"}) {
    const Outcome exec = zbexec("run " + args + " --layers 2 --hidden 8");
    const zb::testing::CliRun sim = zb::testing::run_merged(zbsim, "compare --tf 1 --tb 1 --tw 1 " + args);
    EXPECT_EQ(exec.code, 2) << args << "\n" << exec.output;
    const std::string message = sim.out.substr(sim.out.find("error: ") + 7);
    EXPECT_THAT(exec.output, HasSubstr(message)) << args;
  }
}

// The over-limit judgement is the core's: zbexec declines with zbsim's words.
TEST(ZbexecCli, AnOverLimitScheduleIsDeclinedInZbsimsWords) {
  const Outcome outcome = zbexec("run --schedule gpipe --p 4 --m 8 --layers 4 --hidden 8 --mem-limit 1p");
  EXPECT_EQ(outcome.code, 2) << outcome.output;
  EXPECT_THAT(outcome.output, HasSubstr("over-limit: d0 peaks at 8 > limit 4 (1p)"));
}

TEST(ZbexecCli, CalibrateWritesAScenarioAndPredictComparesWithIt) {
  const auto dir = temp_dir();
  const std::string scenario = (dir / "calibrated.json").string();
  const Outcome calibrate = zbexec("calibrate --p 2 --layers 4 --hidden 32 --repeats 2 --out " + scenario);
  ASSERT_EQ(calibrate.code, 0) << calibrate.output;
  EXPECT_THAT(calibrate.output, AllOf(HasSubstr("t_f ms"), HasSubstr("scenario written"),
                                      HasSubstr("robust estimate of 2 interleaved rounds"),
                                      HasSubstr("spread (1.4826 x MAD of the rounds)")));
  EXPECT_THAT(calibrate.output, ::testing::AnyOf(HasSubstr("outliers: none"), HasSubstr("outlier left out: stage")));
  const zb::exec::CalibrationFile file = zb::exec::read_calibration_file(scenario);
  // The file keeps the calibration's noise, so that a prediction from it states that spread.
  ASSERT_TRUE(file.noise.has_value());
  EXPECT_GE(file.noise->spread, 0.0);
  const zb::Problem problem = file.spec.build("calibrated");
  EXPECT_EQ(problem.devices, 2);
  EXPECT_EQ(problem.time_unit, zb::TimeUnit::ms);
  for (int s = 0; s < 2; ++s) {
    EXPECT_GT(problem.t_f[s], 0);
    EXPECT_GT(problem.t_w[s], 0);
    // Two blocks per stage, 4 rows, h = 32: F saves x, u, z = 9h floats per row and block.
    EXPECT_EQ(problem.mem_f[s], 2 * 9 * 32 * 4 * 4 + (s == 1 ? 32 * 4 * 4 : 0));
  }
  // Measuring all devices at once changes the times, never the memory.
  const std::string concurrent_scenario = (dir / "concurrent.json").string();
  const Outcome concurrent = zbexec("calibrate --p 3 --layers 6 --hidden 32 --repeats 2 --concurrent --out " +
                                    concurrent_scenario);
  ASSERT_EQ(concurrent.code, 0) << concurrent.output;
  EXPECT_THAT(concurrent.output, HasSubstr("devices measuring concurrently"));
  const zb::Problem concurrent_problem = zb::exec::read_calibration_file(concurrent_scenario).spec.build("concurrent");
  EXPECT_EQ(concurrent_problem.devices, 3);
  EXPECT_EQ(concurrent_problem.mem_f[0], problem.mem_f[0]);
  EXPECT_GT(concurrent_problem.t_b[2], 0);
  const Outcome predict = zbexec("run --schedule zb-h1 --p 2 --m 4 --layers 4 --hidden 32 --steps 3 "
                                 "--predict --calibration " + scenario);
  EXPECT_EQ(predict.code, 0) << predict.output;
  EXPECT_THAT(predict.output, AllOf(HasSubstr("predicted span"), HasSubstr("measured span"),
                                    HasSubstr("d0"), HasSubstr("d1"), HasSubstr("all")));
  EXPECT_THAT(predict.output, HasSubstr(fmt::format("(spread: calibration {:.1f}%,", 100 * file.noise->spread)));
  // The run's own pass times replayed: the model's error apart from the costs' drift.
  EXPECT_THAT(predict.output, HasSubstr("replayed "));
  // zbsim reads the calibration file as a scenario (the record of the noise is a known field).
  const std::string zbsim = std::string(ZB_BINARY_DIR) + "/sim/cli/zbsim";
  if (std::filesystem::exists(zbsim)) {
    const zb::testing::CliRun simulated = zb::testing::run_merged(zbsim, "simulate --scenario " + scenario + " --schedule zb-h1 --m 4");
    EXPECT_EQ(simulated.exit_code, 0) << simulated.out;
  }
  // Calibrating in the run: the period's error comes with the calibration's spread.
  const Outcome calibrated = zbexec("run --schedule zb-h1 --p 2 --m 4 --layers 4 --hidden 32 --steps 4 "
                                    "--repeats 3 --predict");
  EXPECT_EQ(calibrated.code, 0) << calibrated.output;
  EXPECT_THAT(calibrated.output, AllOf(HasSubstr("period"), HasSubstr("% (spread: calibration "),
                                       HasSubstr("measured period ")));
}

// Issue 18: sizes beyond what one process runs, and timeouts that are no timeouts, are exit 2
// naming the flag at once; a missing output folder is found before the run writes the trace.
TEST(ZbexecCli, HugeShapesAndBadTimeoutsAreExit2NamingTheFlag) {
  const auto dir = temp_dir();
  const std::string trace = (dir / "t.json").string();
  const struct {
    std::string args;
    const char* message;
  } cases[] = {
      {"run --p 1000 --m 4 --layers 1000 --hidden 8", "--p 1000: over the limit of 256 devices"},
      {"run --p 2 --m 1000000 --layers 2 --hidden 8", "over the limit of 1000000"},
      {"run --p 2 --layers 2 --hidden 2000000000", "--hidden 2000000000"},
      {"run --p 2 --layers 1000000000 --hidden 8", "--layers 1000000000"},
      {"run --p 2 --layers 2 --hidden 8 --microbatch-size 1000000000", "--microbatch-size 1000000000"},
      {"run --layers 2 --hidden 16 --silence-timeout nan", "--silence-timeout nan"},
      {"run --layers 2 --hidden 16 --setup-timeout -1", "--setup-timeout -1"},
      {"run --layers 2 --hidden 16 --svg " + (dir / "missing" / "x.svg").string(), "cannot write"},
  };
  for (const auto& c : cases) {
    const Outcome run = zbexec(c.args + " --steps 1 --trace " + trace);
    EXPECT_EQ(run.code, 2) << c.args << ": " << run.output;
    EXPECT_THAT(run.output, HasSubstr(c.message)) << c.args;
    EXPECT_FALSE(std::filesystem::exists(trace)) << c.args;
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
