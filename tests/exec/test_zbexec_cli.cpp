// zbexec as a user runs it: help, a verified run with trace files, bad input, calibrate + predict.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "exec/calibrate.h"
#include "sim/schedule/atomic_file.h"
#include "sim/schedule/trace_json.h"

#include "cli_test.h"

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
  EXPECT_TRUE(nlohmann::json::accept(zb::read_file((dir / "c.json").string())));
  EXPECT_NE(zb::read_file((dir / "t.svg").string()).find("<svg"), std::string::npos);
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

TEST(ZbexecCli, CalibrateWritesAScenarioAndPredictComparesWithIt) {
  const auto dir = temp_dir();
  const std::string scenario = (dir / "calibrated.json").string();
  const Outcome calibrate = zbexec("calibrate --p 2 --layers 4 --hidden 32 --repeats 2 --out " + scenario);
  ASSERT_EQ(calibrate.code, 0) << calibrate.output;
  EXPECT_THAT(calibrate.output, AllOf(HasSubstr("t_f ms"), HasSubstr("scenario written")));
  const zb::ProblemSpec spec = zb::exec::read_scenario_spec(scenario);
  const zb::Problem problem = spec.build("calibrated");
  EXPECT_EQ(problem.devices, 2);
  EXPECT_EQ(problem.time_unit, "ms");
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
  const zb::Problem concurrent_problem = zb::exec::read_scenario_spec(concurrent_scenario).build("concurrent");
  EXPECT_EQ(concurrent_problem.devices, 3);
  EXPECT_EQ(concurrent_problem.mem_f[0], problem.mem_f[0]);
  EXPECT_GT(concurrent_problem.t_b[2], 0);
  const Outcome predict = zbexec("run --schedule zb-h1 --p 2 --m 4 --layers 4 --hidden 32 --steps 3 "
                                 "--predict --calibration " + scenario);
  EXPECT_EQ(predict.code, 0) << predict.output;
  EXPECT_THAT(predict.output, AllOf(HasSubstr("predicted span"), HasSubstr("measured span"),
                                    HasSubstr("d0"), HasSubstr("d1"), HasSubstr("all")));
}

}  // namespace
