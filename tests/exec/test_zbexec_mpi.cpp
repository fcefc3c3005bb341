// zbexec under mpirun, as a user launches it: one real process per pipeline device. Verified
// runs for several schedules, a rank with other flags refused on every rank, a rank failing before it joins, a killed rank and a
// stopped rank ending the run with their rank named; and zbexec without MPI. Skipped where the
// build found no MPI (then zbexec runs in one process only).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/support/atomic_file.h"
#include "sim/formats/trace_json.h"
#include "tests/testing/cli_test.h"

namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

struct Outcome {
  int code = -1;
  std::string output;
  double seconds = 0;
};

bool have_mpi() {
  const std::string mpirun = ZB_MPIRUN;
  return !mpirun.empty() && mpirun.find("NOTFOUND") == std::string::npos;
}

std::filesystem::path temp_dir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("zbexec_mpi_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
              "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

// Runs a bash script (stderr merged into stdout).
Outcome shell(const std::filesystem::path& dir, const std::string& script) {
  zb::write_file_atomically((dir / "script.sh").string(), script);
  const auto start = Clock::now();
  const zb::testing::CliRun run = zb::testing::run_merged("bash", (dir / "script.sh").string());
  return {run.exit_code, run.out, std::chrono::duration<double>(Clock::now() - start).count()};
}

// mpirun by its name, from its folder on PATH (Open MPI takes an absolute path to mpirun as a
// --prefix, and /usr/bin/mpirun's is refused).
std::string mpi_env() {
  const std::filesystem::path mpirun = ZB_MPIRUN;
  return "export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PATH=" +
         mpirun.parent_path().string() + ":$PATH\n" + mpirun.filename().string();
}

// mpirun as root (CI), with more ranks than this machine's cores. Each rank writes its PID to
// DIR/rR.pid, so that a test can stop or kill one.
std::string mpirun(const std::filesystem::path& dir, int ranks, const std::string& zbexec_args) {
  return mpi_env() + " --oversubscribe -np " + std::to_string(ranks) +
         " bash -c 'echo $$ > " + dir.string() + "/r$OMPI_COMM_WORLD_RANK.pid; exec " + ZBEXEC_PATH +
         " \"$@\"' zbexec " + zbexec_args;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

struct Case {
  std::string name;
  std::string flags;
  int chunks = 1;
  int actions = 3;  // per microbatch and stage: F, B, W; or F, BW (1F1B keeps them together)
};

class MpiRun : public ::testing::TestWithParam<Case> {};

TEST_P(MpiRun, FourRanksVerifyBitwiseAndRankZeroHasEveryAction) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const Case& c = GetParam();
  const auto dir = temp_dir();
  const Outcome run = shell(dir, mpirun(dir, 4, "run --p 4 --m 8 --layers 8 --hidden 32 --steps 2 --verify " +
                                                     c.flags + " --trace " + (dir / "t.json").string()));
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, AllOf(HasSubstr("rank 0 of 4: Open MPI"), HasSubstr("MPI_THREAD_MULTIPLE"),
                                HasSubstr("step 1: loss"), HasSubstr("max |dw| = 0, losses equal")));
  for (int r = 1; r < 4; ++r) {
    EXPECT_THAT(run.output, HasSubstr("rank " + std::to_string(r) + ": ran device " + std::to_string(r) + " for 2 steps"));
  }
  // Rank 0's trace holds every rank's actions, on one clock.
  const zb::Trace trace = zb::trace_from_json(nlohmann::json::parse(zb::read_file((dir / "t.json").string())), "t.json");
  EXPECT_EQ(trace.spans.size(), static_cast<std::size_t>(4 * c.chunks * 8 * c.actions));
  std::vector<int> per_device(4, 0);
  for (const zb::Span& span : trace.spans) {
    ASSERT_GE(span.device, 0);
    ASSERT_LT(span.device, 4);
    ++per_device[static_cast<std::size_t>(span.device)];
    EXPECT_GE(span.start, 0.0);
  }
  for (int count : per_device) EXPECT_EQ(count, c.chunks * 8 * c.actions);
  std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Schedules, MpiRun,
                         ::testing::Values(Case{"onef1b", "--schedule 1f1b", 1, 2}, Case{"zbh1", "--schedule zb-h1"},
                                           Case{"zbh2", "--schedule zb-h2"},
                                           Case{"interleaved", "--schedule 1f1b-i --chunks 2", 2, 2},
                                           Case{"postvalidation", "--schedule zb-h1 --mode post-validation"}),
                         [](const ::testing::TestParamInfo<Case>& param) { return param.param.name; });

TEST(ZbexecMpi, ARankWithOtherFlagsIsRefusedOnEveryRankNamingTheFlag) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const auto dir = temp_dir();
  // Rank 2 gets --seed 5 (the wrapper adds it for that rank only).
  const std::string script =
      mpi_env() + " --oversubscribe -np 4 bash -c 'extra=; [ $OMPI_COMM_WORLD_RANK = 2 ] && extra=\"--seed 5\"; exec " +
      ZBEXEC_PATH + " run --p 4 --m 8 --layers 4 --hidden 16 --steps 1 $extra'\n";
  const Outcome run = shell(dir, script);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_EQ(count(run.output, "rank 2 was started with another run than rank 0 (line 2: rank 0 has "
                              "'--seed 1', it has '--seed 5')"), 4u) << run.output;
  for (int r = 0; r < 4; ++r) EXPECT_THAT(run.output, HasSubstr("zbexec run: rank " + std::to_string(r) + ": error:"));
  EXPECT_THAT(run.output, ::testing::Not(HasSubstr("step 0: loss")));
  std::filesystem::remove_all(dir);
}

TEST(ZbexecMpi, AKilledRankEndsEveryRankWithItsRankNamed) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const auto dir = temp_dir();
  const std::string log = (dir / "log.txt").string();
  // Kill rank 1 with SIGKILL once the run is under way; time how long the others take to end.
  const Outcome run = shell(dir, mpirun(dir, 4, "run --p 4 --m 8 --layers 4 --hidden 16 --steps 100000") + " > " +
                                     log + " 2>&1 &\nM=$!\n"
                                     "for i in $(seq 100); do grep -q 'zbexec run: schedule' " + log +
                                     " 2>/dev/null && break; sleep 0.1; done\nsleep 0.3\n"
                                     "kill -9 $(cat " + dir.string() + "/r1.pid)\nstart=$(date +%s%N)\nwait $M\ncode=$?\n"
                                     "echo \"ended after $(( ($(date +%s%N) - start) / 1000000 )) ms\"\ncat " + log +
                                     "\nexit $code\n");
  EXPECT_NE(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("process rank 1 with PID"));
  EXPECT_THAT(run.output, HasSubstr("exited on signal 9 (Killed)"));
  EXPECT_LT(run.seconds, 20) << run.output;
  std::filesystem::remove_all(dir);
}

TEST(ZbexecMpi, AStoppedRankIsNamedByTheWatchdogAndTheOthersEnd) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const auto dir = temp_dir();
  const std::string log = (dir / "log.txt").string();
  const std::string pids = dir.string();
  // Stop rank 1: within --silence-timeout (2 s), rank 0 names it; ranks 0 and 2 then end, at the
  // latest 5 s after (a device thread blocked sending to the stopped rank never returns: the
  // watchdog ends the rank). Then the stopped rank is killed: with a rank left stopped, Open MPI
  // 4.1.4's teardown of the job sometimes hangs, which is mpirun's.
  const Outcome run = shell(dir, mpirun(dir, 3, "run --p 3 --m 6 --layers 3 --hidden 16 --steps 100000 "
                                                "--silence-timeout 2") + " > " + log + " 2>&1 &\nM=$!\n"
                                     "for i in $(seq 100); do grep -q 'zbexec run: schedule' " + log +
                                     " 2>/dev/null && break; sleep 0.1; done\nsleep 0.3\n"
                                     "kill -STOP $(cat " + pids + "/r1.pid)\n"
                                     "for i in $(seq 150); do kill -0 $(cat " + pids + "/r0.pid) 2>/dev/null || "
                                     "kill -0 $(cat " + pids + "/r2.pid) 2>/dev/null || break; sleep 0.1; done\n"
                                     "kill -0 $(cat " + pids + "/r0.pid) 2>/dev/null || kill -0 $(cat " + pids +
                                     "/r2.pid) 2>/dev/null || echo 'ranks 0 and 2 have ended'\n"
                                     "kill -9 $(cat " + pids + "/r1.pid)\nwait $M\ncat " + log + "\n");
  EXPECT_THAT(run.output, HasSubstr("ranks 0 and 2 have ended"));
  EXPECT_THAT(run.output, HasSubstr("zbexec: rank 0: rank 1 has been silent for 2 s"));
  EXPECT_LT(run.seconds, 25) << run.output;
  std::filesystem::remove_all(dir);
}

// A rank that fails before it joins the group (here: its schedule file is missing on its node)
// must end the job at once, not leave the others waiting --setup-timeout for it: zbexec exits 2
// before MPI_Init and mpirun then ends the job.
TEST(ZbexecMpi, ARankThatFailsBeforeJoiningEndsTheJobAtOnce) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const auto dir = temp_dir();
  const std::string schedule = (dir / "s.txt").string();
  zb::write_file_atomically(schedule, "d0: F0 BW0\nd1: F0 BW0\n");
  // Every rank is given the file's path; rank 1 looks for it in a folder its node lacks.
  const std::string script =
      mpi_env() + " --oversubscribe -np 2 bash -c 'f=" + schedule + "; [ $OMPI_COMM_WORLD_RANK = 1 ] && f=" +
      dir.string() + "/missing/s.txt; exec " + ZBEXEC_PATH +
      " run --p 2 --m 1 --layers 2 --hidden 16 --steps 1 --setup-timeout 200 --schedule-file $f'\n";
  const Outcome run = shell(dir, script);
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("missing/s.txt: cannot read"));
  EXPECT_LT(run.seconds, 60) << run.output;  // far below the 200 s the others would otherwise wait
  std::filesystem::remove_all(dir);
}

// A rank that never reaches MPI_Init (here it sleeps) would hold the others inside MPI_Init for
// ever: the start-up watchdog ends them at --setup-timeout + 5 s, saying why.
TEST(ZbexecMpi, ARankThatNeverStartsEndsTheOthersAfterTheSetupTimeout) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const auto dir = temp_dir();
  const std::string script =
      mpi_env() + " --oversubscribe -np 2 bash -c '[ $OMPI_COMM_WORLD_RANK = 1 ] && sleep 300; exec " + ZBEXEC_PATH +
      " run --p 2 --m 2 --layers 2 --hidden 16 --steps 1 --setup-timeout 2'\n";
  const Outcome run = shell(dir, script);
  EXPECT_NE(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("MPI start-up did not finish within 7 s (--setup-timeout + 5)"));
  EXPECT_LT(run.seconds, 60) << run.output;  // not the 300 s the sleeping rank takes
  std::filesystem::remove_all(dir);
}

TEST(ZbexecMpi, TheJobMustHaveOneRankPerPipelineDevice) {
  if (!have_mpi()) GTEST_SKIP() << "no MPI in this build";
  const auto dir = temp_dir();
  const Outcome run = shell(dir, mpirun(dir, 2, "run --p 3 --m 6 --layers 3 --hidden 16 --steps 1"));
  EXPECT_EQ(run.code, 2) << run.output;
  EXPECT_THAT(run.output, HasSubstr("the MPI job has 2 ranks but --p is 3"));
  std::filesystem::remove_all(dir);
}

// The GPU machine has no MPI library: zbexec must not need one to start and run in one process.
TEST(ZbexecWithoutMpi, RunsInOneProcessAndSaysWhyItCannotJoinAnMpiJob) {
  const auto dir = temp_dir();
  const Outcome needed = shell(dir, "readelf -d " + std::string(ZBEXEC_PATH) + " | grep NEEDED\n");
  ASSERT_EQ(needed.code, 0) << needed.output;
  EXPECT_THAT(needed.output, ::testing::Not(HasSubstr("libmpi")));
  // No module to load, as on a machine without Open MPI: one process still runs...
  const std::string no_module = "export ZBEXEC_MPI_MODULE=/nonexistent/libzbexec_mpi.so\n";
  const Outcome alone = shell(dir, no_module + ZBEXEC_PATH + " run --p 2 --m 4 --layers 2 --hidden 16 --steps 1 --verify\n");
  EXPECT_EQ(alone.code, 0) << alone.output;
  EXPECT_THAT(alone.output, HasSubstr("max |dw| = 0"));
  // ...also under a launcher of one process, and an MPI job is refused naming the module.
  const Outcome one = shell(dir, no_module + "OMPI_COMM_WORLD_SIZE=1 " + ZBEXEC_PATH + " run --p 2 --m 4 --layers 2 --hidden 16 --steps 1\n");
  EXPECT_EQ(one.code, 0) << one.output;
  const Outcome job = shell(dir, no_module + "OMPI_COMM_WORLD_SIZE=4 " + ZBEXEC_PATH + " run --p 4 --steps 1\n");
  EXPECT_EQ(job.code, 2) << job.output;
  EXPECT_THAT(job.output, AllOf(HasSubstr("OMPI_COMM_WORLD_SIZE=4"), HasSubstr("cannot be loaded"),
                                HasSubstr("/nonexistent/libzbexec_mpi.so")));
  std::filesystem::remove_all(dir);
}

}  // namespace
