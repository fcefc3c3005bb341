// Runs the zbsim binary as a user would and checks exit codes, messages and written files.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/testing/cli_test.h"

namespace {

namespace fs = std::filesystem;
using zb::testing::CliRun;
using zb::testing::slurp;

class Cli : public zb::testing::CliTest {
 protected:
  CliRun zbsim(const std::string& args) { return run(ZBSIM_PATH, args); }
};

constexpr const char* kUnit = "--p 4 --m 8 --tf 1 --tb 1 --tw 1";

TEST_F(Cli, UnitCostSpansAsJson) {
  const CliRun run = zbsim(std::string("compare ") + kUnit + " --schedules 1f1b,zb-h1,zb-h2 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["results"].size(), 3u);
  EXPECT_EQ(json["results"][0]["schedule"], "1f1b");
  EXPECT_DOUBLE_EQ(json["results"][0]["span"].get<double>(), 33);
  EXPECT_DOUBLE_EQ(json["results"][1]["span"].get<double>(), 27);
  EXPECT_DOUBLE_EQ(json["results"][2]["span"].get<double>(), 24);
  EXPECT_EQ(json["results"][2]["peak_memory"].size(), 4u);
  EXPECT_EQ(json["problem"]["p"], 4);
}

// --offload-chunks adds the offload pass to every schedule that does not offload by itself: the
// rows say so in their name and hold less; po-h keeps its own copies.
TEST_F(Cli, OffloadChunksOffloadsEverySchedule) {
  const std::string problem = "compare --p 8 --m 32 --chunks 4 --tf 1 --tb 1 --tw 1 --t-offload 1 --format json";
  const CliRun plain = zbsim(problem + " --schedules 1f1b-i,po-h");
  const CliRun offloaded = zbsim(problem + " --schedules 1f1b-i,po-h --offload-chunks 2");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  ASSERT_EQ(offloaded.exit_code, 0) << offloaded.err;
  const auto before = nlohmann::json::parse(plain.out)["results"];
  const auto after = nlohmann::json::parse(offloaded.out)["results"];
  EXPECT_EQ(after[0]["schedule"], "1f1b-i+offload2");
  EXPECT_EQ(after[1]["schedule"], "po-h");
  const auto peak = [](const nlohmann::json& row) {
    double most = 0;
    for (const auto& value : row["peak_memory"]) most = std::max(most, value.get<double>());
    return most;
  };
  EXPECT_LT(peak(after[0]), 0.6 * peak(before[0]));
  EXPECT_DOUBLE_EQ(peak(after[1]), peak(before[1]));
  EXPECT_EQ(after[0]["span"], before[0]["span"]);  // the copies hide under compute at this k
}

// Standard output is written only when flushed: a full disk or a closed descriptor must turn a
// success into exit 1 with a message, and a standard error that cannot be written must not turn a
// bad input into an abort.
TEST_F(Cli, StandardStreamsThatCannotBeWrittenAreExitCodesNotSilenceOrAborts) {
  const CliRun full = zbsim("export --schedule zb-h1 --p 4 --m 8 --to text > /dev/full");
  EXPECT_EQ(full.exit_code, 1);
  EXPECT_NE(full.err.find("zbsim export: error: standard output could not be written: No space left on device"),
            std::string::npos)
      << full.err;
  const CliRun closed = zbsim("compare --p 4 --m 8 --tf 1 --tb 1 --tw 1 >&-");
  EXPECT_EQ(closed.exit_code, 1);
  EXPECT_NE(closed.err.find("zbsim compare: error: standard output could not be written"), std::string::npos);
  const CliRun help = zbsim("--help > /dev/full");
  EXPECT_EQ(help.exit_code, 1);
  EXPECT_NE(help.err.find("zbsim: error: standard output could not be written"), std::string::npos) << help.err;
  // Bad input with stderr on a full device or closed: still exit 2 (an abort would be 134).
  for (const char* err : {"2>/dev/full", "2>&-"}) {
    const std::string command = std::string(ZBSIM_PATH) + " export --schedule zb-h1 --p 4 --m 0 --to text " + err;
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << err;
    EXPECT_EQ(WEXITSTATUS(status), 2) << err;
  }
}

// Two outputs on one file, or an output over an input, are refused before any work: the input is
// left as it was and nothing is written.
TEST_F(Cli, AnOutputOverAnotherOutputOrOverAnInputIsRefusedBeforeAnyWork) {
  const std::string grid = slurp(std::string(ZB_SOURCE_DIR) + "/scenarios/sweeps/bubble-vs-m.json");
  write("g.json", grid);
  const CliRun over_input = zbsim("sweep --grid " + path("g.json") + " --out " + path("g.json"));
  EXPECT_EQ(over_input.exit_code, 2);
  EXPECT_NE(over_input.err.find("--out: '" + path("g.json") + "' is also read as --grid"), std::string::npos)
      << over_input.err;
  EXPECT_EQ(slurp(dir_ / "g.json"), grid);
  // The same file under another name: a hard link.
  fs::create_hard_link(dir_ / "g.json", dir_ / "link.json");
  EXPECT_EQ(zbsim("sweep --grid " + path("link.json") + " --out " + path("g.json")).exit_code, 2);
  const CliRun twice = zbsim(std::string("simulate ") + kUnit + " --schedule zb-h1 --trace " + path("a.json") +
                             " --chrome " + dir_.string() + "/./a.json");
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("--trace and --chrome: both write"), std::string::npos) << twice.err;
  EXPECT_FALSE(fs::exists(dir_ / "a.json"));
  // Devices are no clash.
  EXPECT_EQ(zbsim(std::string("simulate ") + kUnit + " --schedule zb-h1 --trace /dev/null --chrome /dev/null").exit_code,
            0);
}

TEST_F(Cli, CsvAndTableFormats) {
  const CliRun csv = zbsim(std::string("compare ") + kUnit + " --schedules zb-h1 --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\n')),
            "schedule,status,chunks,makespan,span,work,bubble_rate,peak_memory_max,idle_max,peak_memory,idle,"
            "step_time,step_time_sync,step_time_post_validation,reason");
  EXPECT_NE(csv.out.find("zb-h1,ok,1,27,27,24,"), std::string::npos) << csv.out;
  const CliRun table = zbsim(std::string("compare ") + kUnit);
  ASSERT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("zb-h2"), std::string::npos);
  EXPECT_NE(table.out.find("1f1b-i"), std::string::npos);  // runs with chunks=2 on its own
}

TEST_F(Cli, MemoryLimitMarksRowsOverTheLimit) {
  const CliRun run = zbsim(std::string("compare ") + kUnit + " --schedules zb-h1,zb-h2 --mem-limit 1p --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["results"][0]["status"], "ok");
  EXPECT_EQ(json["results"][1]["status"], "over-limit");
}

TEST_F(Cli, SimulateWritesEveryTraceFormat) {
  const fs::path trace = dir_ / "t.json", chrome = dir_ / "c.json", svg = dir_ / "t.svg";
  const CliRun run = zbsim(std::string("simulate ") + kUnit + " --tcomm 0.5 --schedule zb-h1 --trace " +
                        trace.string() + " --chrome " + chrome.string() + " --svg " + svg.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto t = nlohmann::json::parse(slurp(trace));
  EXPECT_EQ(t["meta"]["schedule"], "zb-h1");
  EXPECT_EQ(t["meta"]["problem"]["p"], 4);
  EXPECT_EQ(t["devices"], 4);
  EXPECT_GE(t["spans"].size(), 96u);
  EXPECT_TRUE(nlohmann::json::parse(slurp(chrome)).contains("traceEvents"));
  EXPECT_NE(slurp(svg).find("<svg"), std::string::npos);
  // Same input, byte-identical output.
  const fs::path again = dir_ / "t2.json";
  ASSERT_EQ(zbsim(std::string("simulate ") + kUnit + " --tcomm 0.5 --schedule zb-h1 --trace " + again.string()).exit_code, 0);
  EXPECT_EQ(slurp(trace), slurp(again));
}

TEST_F(Cli, ExportAndReimportPytorchCsv) {
  const fs::path csv = dir_ / "zb.csv";
  ASSERT_EQ(zbsim("export --schedule zb-h2 --p 4 --m 8 --to pytorch-csv --out " + csv.string()).exit_code, 0);
  const CliRun run = zbsim("simulate --schedule-file " + csv.string() + " --tf 1 --tb 1 --tw 1 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(run.out)["results"][0]["span"].get<double>(), 24);
  const CliRun text = zbsim("export --schedule-file " + csv.string() + " --to text");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  // The shape the CSV implies travels with the text form.
  EXPECT_EQ(text.out.rfind("placement: linear\nchunks: 1\nd0: F0 F1 F2 F3 F4 F5 F6", 0), 0u) << text.out;
}

TEST_F(Cli, ReadsPytorchFixture) {
  const CliRun run = zbsim("simulate --schedule-file " + std::string(ZB_SOURCE_DIR) +
                        "/tests/data/pytorch/dualpipev_4rank_10mb.csv --tf 2 --tb 2 --tw 1 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["problem"]["p"], 4);
  EXPECT_EQ(json["problem"]["chunks"], 2);
  EXPECT_EQ(json["problem"]["placement"], "vshape");
}

TEST_F(Cli, PytorchCommsCsvImportsAndReexports) {
  const std::string fixture = std::string(ZB_SOURCE_DIR) + "/tests/data/pytorch/dualpipev_4rank_10mb_comms.csv";
  const CliRun run = zbsim("simulate --schedule-file " + fixture + " --tf 1 --tb 1 --tw 1 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("240 SEND/RECV transfer points checked; 8 UNSHARD, 8 RESHARD, 8 REDUCE_GRAD"),
            std::string::npos)
      << run.err;
  const fs::path out = dir_ / "again.csv";
  ASSERT_EQ(zbsim("export --schedule-file " + fixture + " --to pytorch-csv-comms --out " + out.string()).exit_code, 0);
  std::string expected = slurp(fixture);
  std::erase(expected, '\r');  // PyTorch's csv.writer ends lines with CRLF; we write LF
  EXPECT_EQ(slurp(out), expected);
}

TEST_F(Cli, ASimgridClusterWithZeroByteActivationsIsWarnedAbout) {
  const std::string cluster = std::string(ZB_SOURCE_DIR) + "/models/clusters/1x8-nvlink.json";
  const std::string base = std::string("simulate ") + kUnit + " --tcomm 0.1 --schedule 1f1b --engine simgrid --cluster " + cluster;
  const CliRun bare = zbsim(base);
  if (bare.exit_code == 2 && bare.err.find("no SimGrid") != std::string::npos) GTEST_SKIP() << bare.err;
  ASSERT_EQ(bare.exit_code, 0) << bare.err;
  EXPECT_NE(bare.err.find("warning: the cluster " + cluster + " carries 0-byte activations"), std::string::npos)
      << bare.err;
  const CliRun sized = zbsim(base + " --bytes-act 1e6");
  ASSERT_EQ(sized.exit_code, 0) << sized.err;
  EXPECT_EQ(sized.err.find("warning"), std::string::npos) << sized.err;
  const CliRun ideal = zbsim(std::string("simulate ") + kUnit + " --schedule 1f1b --engine simgrid");
  EXPECT_EQ(ideal.err.find("warning"), std::string::npos) << ideal.err;  // the ideal network has no links to fill
}

TEST_F(Cli, ExportsTorchtitanSettingsWithTheCsv) {
  const fs::path csv = dir_ / "zbv.csv";
  const CliRun run = zbsim("export --schedule zb-v-h --p 4 --m 8 --to torchtitan --out " + csv.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("--parallelism.pipeline_parallel_schedule ZBVZeroBubble\n"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("--parallelism.pipeline_parallel_schedule_csv " + csv.string() + "\n"), std::string::npos);
  EXPECT_NE(run.out.find("--parallelism.num_pp_microbatches 8\n"), std::string::npos);
  EXPECT_EQ(run.out.find("layers_per_stage"), std::string::npos);  // two stages per rank is torchtitan's default
  EXPECT_EQ(slurp(csv).rfind("0F0,", 0), 0u);                      // compute-only: what torchtitan loads
  // Four chunks: torchtitan needs layers per stage, and 30 layers + 2 over 16 stages is 2 each.
  const fs::path csv4 = dir_ / "i4.csv";
  const CliRun four = zbsim("export --schedule 1f1b-i --chunks 4 --p 4 --m 8 --to torchtitan --layers 30 --out " + csv4.string());
  ASSERT_EQ(four.exit_code, 0) << four.err;
  EXPECT_NE(four.out.find("--parallelism.pipeline_parallel_schedule Interleaved1F1B\n"), std::string::npos);
  EXPECT_NE(four.out.find("--parallelism.pipeline_parallel_layers_per_stage 2\n"), std::string::npos) << four.out;
  const fs::path none = dir_ / "none.csv";
  const CliRun missing = zbsim("export --schedule 1f1b-i --chunks 4 --p 4 --m 8 --to torchtitan --out " + none.string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("--layers N"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(none));
  EXPECT_EQ(zbsim("export --schedule zb-h1 --p 4 --m 8 --to torchtitan").exit_code, 2);  // needs --out
}

TEST_F(Cli, DeadlockingScheduleFileIsRefusedWithTheGrid) {
  const fs::path file = write("dead.txt", "d0: F0 B0 W0 F1 B1 W1\nd1: F0 F1 B1 W1 B0 W0\n");
  const fs::path svg = dir_ / "dead.svg";
  const CliRun run = zbsim("simulate --schedule-file " + file.string() + " --tf 1 --tb 1 --tw 1 --svg " + svg.string());
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("deadlock"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("<-- here"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(svg));
}

// The over-limit judgement has one owner: the same status, words and exit code on both engines.
TEST_F(Cli, OverLimitIsAStatusOnEveryEngine) {
  for (const char* engine : {"eval", "simgrid"}) {
    const CliRun run = zbsim(std::string("simulate ") + kUnit + " --schedule gpipe --mem-limit 1p --format json --engine " +
                             engine);
    ASSERT_EQ(run.exit_code, 0) << engine << ": " << run.err;
    const auto row = nlohmann::json::parse(run.out)["results"][0];
    EXPECT_EQ(row["status"], "over-limit") << engine;
    EXPECT_EQ(row["reason"], "d0 peaks at 8 > limit 4 (1p)") << engine;
  }
}

TEST_F(Cli, AnUnknownTimeUnitIsBadInputListingTheValidOnes) {
  const fs::path chrome = dir_ / "c.json";
  const CliRun run = zbsim(std::string("simulate ") + kUnit + " --schedule zb-h1 --time-unit min --chrome " + chrome.string());
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--time-unit: unknown time unit 'min' (valid: s, ms, us, ns)"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(chrome));
  // A real unit reaches the Chrome trace: 1 us per unit.
  ASSERT_EQ(zbsim(std::string("simulate ") + kUnit + " --schedule zb-h1 --time-unit us --chrome " + chrome.string()).exit_code, 0);
  const auto events = nlohmann::json::parse(slurp(chrome))["traceEvents"];
  double last_end = 0;
  for (const auto& event : events) {
    if (event.value("ph", "") == "X") last_end = std::max(last_end, event["ts"].get<double>() + event["dur"].get<double>());
  }
  // The trace holds the default three steps; zb-h1's post-validation period is its span, 27.
  EXPECT_DOUBLE_EQ(last_end, 3 * 27);
}

// The FIFO-channel rule is the core validator's: zbsim refuses what zbexec refuses, on both engines.
TEST_F(Cli, OutOfOrderChannelsAreRefusedAsByTheExecutor) {
  const fs::path file = write("reordered.txt", "d0: F0 F1 B0 W0 B1 W1\nd1: F1 F0 B1 W1 B0 W0\n");
  for (const char* engine : {"eval", "simgrid"}) {
    const CliRun run = zbsim("simulate --schedule-file " + file.string() + " --tf 1 --tb 1 --tw 1 --engine " + engine);
    EXPECT_EQ(run.exit_code, 2) << engine;
    EXPECT_NE(run.err.find("stage 1 consumes activations (F) in the order [1, 0] while stage 0 sends them in the order [0, 1]"),
              std::string::npos)
        << run.err;
  }
}

// Schedule files carry their placement: the V reading of the same lists is kept, and a
// conflicting --placement names both.
TEST_F(Cli, ScheduleFilesCarryTheirPlacement) {
  const std::string lists = "d0: F0 F0.1 BW0.1 BW0\nd1: F0 F0.1 BW0.1 BW0\n";
  const fs::path v = write("v.txt", "placement: vshape\n" + lists);
  const CliRun run = zbsim("simulate --schedule-file " + v.string() + " --tf 1 --tb 1 --tw 1 --tcomm 0.5 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["problem"]["placement"], "vshape");
  EXPECT_DOUBLE_EQ(json["results"][0]["span"].get<double>(), 8);
  const CliRun conflict =
      zbsim("simulate --schedule-file " + v.string() + " --tf 1 --tb 1 --tw 1 --placement interleaved");
  EXPECT_EQ(conflict.exit_code, 2);
  EXPECT_NE(conflict.err.find("the schedule says placement vshape but the problem says placement interleaved"),
            std::string::npos)
      << conflict.err;
  // The DualPipeV CSV exported to text keeps its V placement when read back.
  const fs::path text = dir_ / "dualpipev.txt";
  ASSERT_EQ(zbsim("export --schedule-file " + std::string(ZB_SOURCE_DIR) + "/tests/data/pytorch/dualpipev_4rank_10mb.csv"
                  " --to text --out " + text.string()).exit_code, 0);
  EXPECT_EQ(slurp(text).rfind("placement: vshape\nchunks: 2\nd0:", 0), 0u) << slurp(text).substr(0, 80);
  const CliRun back = zbsim("simulate --schedule-file " + text.string() + " --tf 2 --tb 2 --tw 1 --format json");
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(nlohmann::json::parse(back.out)["problem"]["placement"], "vshape");
}

// Bad input of each kind: exit 2, a message naming the field and value, no output file.
struct BadInput {
  const char* args;
  const char* scenario;  // written to s.json when not null
  const char* expected;
};

TEST_F(Cli, BadInputExitsTwoNamesTheFieldAndWritesNothing) {
  const BadInput cases[] = {
      {"--p 0 --m 8 --tf 1 --tb 1 --tw 1", nullptr, "p is 0: give the number of pipeline devices (--p N"},
      {"--p 4 --m 0 --tf 1 --tb 1 --tw 1", nullptr, "m is 0: give the number of microbatches (--m N"},
      {"--p 4 --m 8 --tf 1 --tb -1 --tw 1", nullptr, "'t_b' has value -1"},
      {"--p 4 --m 8 --tf 1 --tb 1 --tw 1 --schedules zb-h9", nullptr, "unknown schedule 'zb-h9'"},
      {"--p 4 --m 8 --tf 1 --tb x --tw 1", nullptr, "--tb: bad number 'x'"},
      {"--p 4 --m 8 --tf 1 --tb 1 --tw 1 --mem-limit 2q", nullptr, "bad memory limit '2q'"},
      {"--p 4 --m 8 --tf 1 --tb 1", nullptr, "'t_w' is missing"},
      {"--scenario SCENARIO", "{\"problem\": {\"p\": 4,", "malformed JSON"},
      {"--scenario SCENARIO", "{\"problem\": {\"p\": 4, \"m\": 8, \"t_f\": 1, \"t_b\": 1, \"t_w\": 1, \"tw\": 3}}",
       "unknown field 'tw'"},
      {"--scenario SCENARIO", "{\"problem\": {\"p\": 4, \"m\": 8, \"t_f\": 1, \"t_b\": 1, \"t_w\": 1}, \"extra\": 1}",
       "unknown field 'extra'"},
      {"--scenario SCENARIO", "{\"problem\": {\"p\": -3, \"m\": 8, \"t_f\": 1, \"t_b\": 1, \"t_w\": 1}}", "p is -3"},
      {"--scenario SCENARIO", "{\"problem\": {\"p\": 4, \"m\": 8, \"t_f\": 1e400, \"t_b\": 1, \"t_w\": 1}}",
       "malformed JSON"},
      {"--scenario /nonexistent/s.json", nullptr, "/nonexistent/s.json: cannot read"},
      {"--p 4 --m 8 --tf 1 --tb 1 --tw 1 --bogus-flag", nullptr, "bogus-flag"},
  };
  for (const BadInput& bad : cases) {
    std::string args = bad.args;
    if (bad.scenario) {
      const fs::path scenario = write("s.json", bad.scenario);
      args.replace(args.find("SCENARIO"), 8, scenario.string());
    }
    const fs::path svg = dir_ / "out.svg";
    const CliRun run = zbsim("compare " + args + " --svg " + svg.string());
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.err;
    EXPECT_NE(run.err.find(bad.expected), std::string::npos) << args << "\nstderr: " << run.err;
    if (bad.scenario) {
      EXPECT_NE(run.err.find("s.json"), std::string::npos) << run.err;  // names the file
    }
    EXPECT_FALSE(fs::exists(svg)) << args;
    EXPECT_TRUE(run.out.empty()) << args;
  }
}

// A few thousand '[' once overflowed the stack of every recursive reader (a segfault).
TEST_F(Cli, DeeplyNestedJsonIsBadInputInEveryReader) {
  const std::string deep = "{\"a\": " + std::string(5000, '[') + std::string(5000, ']') + "}";
  const fs::path file = write("deep.json", deep);
  const std::string readers[] = {
      "compare --scenario " + file.string(),
      std::string("simulate ") + kUnit + " --schedule-file " + file.string(),
      "sweep --grid " + file.string() + " --out " + (dir_ / "r.csv").string(),
  };
  for (const std::string& args : readers) {
    const CliRun run = zbsim(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.err;
    EXPECT_NE(run.err.find("deep.json: malformed JSON: nested deeper than 256 levels"), std::string::npos)
        << args << "\n" << run.err;
  }
  // A bad line is quoted in part, not whole.
  const fs::path text = write("long.txt", std::string(10000, 'x') + "\n");
  const CliRun run = zbsim(std::string("simulate ") + kUnit + " --schedule-file " + text.string());
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_LT(run.err.size(), 400u) << run.err;
  EXPECT_FALSE(fs::exists(dir_ / "r.csv"));
}

TEST_F(Cli, HelpOnEverySubcommand) {
  for (const char* command : {"compare", "simulate", "export"}) {
    const CliRun run = zbsim(std::string(command) + " --help");
    EXPECT_EQ(run.exit_code, 0) << command;
    EXPECT_NE(run.out.find("usage: zbsim"), std::string::npos) << command;
    EXPECT_NE(run.out.find("example:"), std::string::npos) << command;
  }
  EXPECT_EQ(zbsim("--help").exit_code, 0);
  EXPECT_EQ(zbsim("frobnicate").exit_code, 2);
}

// A model-driven scenario names its cluster: --engine simgrid uses it unless --cluster says otherwise.
TEST_F(Cli, SimgridUsesTheScenariosCluster) {
  const std::string scenario = std::string(ZB_SOURCE_DIR) + "/scenarios/models/paper-gpt-1.5b-p8-m24.json";
  const std::string base = "simulate --scenario " + scenario + " --schedule zb-h1 --engine simgrid --format json";
  const CliRun own = zbsim(base);
  if (own.exit_code == 2 && own.err.find("built without") != std::string::npos) GTEST_SKIP() << own.err;
  ASSERT_EQ(own.exit_code, 0) << own.err;
  const CliRun named = zbsim(base + " --cluster " + std::string(ZB_SOURCE_DIR) + "/models/clusters/1x8-nvlink.json");
  ASSERT_EQ(named.exit_code, 0) << named.err;
  EXPECT_EQ(own.out, named.out);
  const CliRun ideal = zbsim(base + " --cluster ideal");
  ASSERT_EQ(ideal.exit_code, 0) << ideal.err;
  EXPECT_NE(own.out, ideal.out);  // the grad-norm messages cross real links, not the ideal network
}

// Rows carry the steady-state step time of both optimizer modes and the schedule's own; the
// evaluator and SimGrid's ideal network give the same; --t-opt adds to both modes.
TEST_F(Cli, StepTimesOfBothOptimizerModes) {
  const std::string base = std::string("simulate ") + kUnit + " --tcomm 0.5 --t-reduce-hop 0.5 --format json";
  auto row = [&](const std::string& flags) {
    const CliRun run = zbsim(base + " " + flags);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.exit_code == 0 ? nlohmann::json::parse(run.out)["results"][0] : nlohmann::json();
  };
  const auto plain = row("--schedule zb-h2");
  const auto stepped = row("--schedule zb-h2 --t-opt 2");
  EXPECT_DOUBLE_EQ(stepped["step_time_sync"].get<double>(), plain["step_time_sync"].get<double>() + 2);
  EXPECT_DOUBLE_EQ(stepped["step_time_post_validation"].get<double>(),
                   plain["step_time_post_validation"].get<double>() + 2);
  // ZB-H2 runs with post-validation, which hides the all-reduce and the pipeline's fill.
  EXPECT_LT(plain["step_time_post_validation"].get<double>(), plain["step_time_sync"].get<double>());
  EXPECT_EQ(plain["step_time"], plain["step_time_post_validation"]);
  const auto one_f_one_b = row("--schedule 1f1b");
  EXPECT_EQ(one_f_one_b["step_time"], one_f_one_b["step_time_sync"]);
  // A data-parallel reduction of 5 per device, longer than any compute after a last W, delays
  // every step's gradients (docs/design.md section 7).
  const auto reduced = row("--schedule zb-h2 --t-dp-reduce 5");
  EXPECT_GT(reduced["step_time_sync"].get<double>(), plain["step_time_sync"].get<double>());
  EXPECT_GT(reduced["step_time_post_validation"].get<double>(), plain["step_time_post_validation"].get<double>());
  // Every step rolling back: the early update is redone after the verdict, slower than sync.
  const auto rollback = row("--schedule zb-h2 --rollback-rate 1");
  EXPECT_GE(rollback["step_time_post_validation"].get<double>(), plain["step_time_sync"].get<double>());
  const auto simgrid = zbsim(base + " --schedule zb-h2 --engine simgrid --cluster ideal");
  if (simgrid.exit_code == 2 && simgrid.err.find("no SimGrid") != std::string::npos) GTEST_SKIP() << simgrid.err;
  ASSERT_EQ(simgrid.exit_code, 0) << simgrid.err;
  const auto simulated = nlohmann::json::parse(simgrid.out)["results"][0];
  for (const char* key : {"step_time", "step_time_sync", "step_time_post_validation"}) {
    EXPECT_NEAR(simulated[key].get<double>(), plain[key].get<double>(), 1e-9) << key;
  }
}

// Model-driven rows carry their throughput in both optimizer modes (docs/design.md section 8):
// samples/GPU/s = m b / step time / p, tokens/s = samples s / step time, and MFU; the unsuffixed
// figures are the normal mode's. 1F1B-I on the 14.6B model (p = 16 over two nodes: a per-link
// t_comm) runs with costs derived for two chunks.
TEST_F(Cli, ModelDrivenRowsCarryTheirThroughput) {
  const std::string scenario = std::string(ZB_SOURCE_DIR) + "/scenarios/models/paper-gpt-14.6b-p16-m48.json";
  const CliRun run = zbsim("compare --scenario " + scenario + " --schedules zb-2p,zb-1p,1f1b,1f1b-i --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  const int p = json["problem"]["p"].get<int>();
  const int m = json["problem"]["m"].get<int>();
  ASSERT_EQ(json["results"].size(), 4U);
  for (const auto& row : json["results"]) {
    ASSERT_EQ(row["status"], "ok") << row.dump();
    for (const std::string mode : {"", "_sync", "_post_validation"}) {
      const double step_s = row["step_time" + mode].get<double>() * 1e-3;  // ms
      EXPECT_NEAR(row["samples_per_s_per_gpu" + mode].get<double>(), m * 1.0 / step_s / p, 1e-9) << row.dump();
      EXPECT_NEAR(row["tokens_per_s" + mode].get<double>(), m * 1.0 * 1024 / step_s, 1e-6) << row.dump();
      EXPECT_GT(row["mfu" + mode].get<double>(), 0.2);
      // Below the sustained GEMM ceiling (models/hardware.h, 0.8 of peak): shapes, memory-bound
      // passes, bubbles and the optimizer step only take away.
      EXPECT_LT(row["mfu" + mode].get<double>(), 0.8);
    }
    EXPECT_GT(row["memory_GB"].get<double>(), 10);
    EXPECT_LT(row["memory_GB"].get<double>(), 80);
  }
  EXPECT_EQ(json["results"][3]["chunks"], 2);
  EXPECT_EQ(json["results"][0]["samples_per_s_per_gpu"], json["results"][0]["samples_per_s_per_gpu_post_validation"]);
  EXPECT_EQ(json["results"][2]["samples_per_s_per_gpu"], json["results"][2]["samples_per_s_per_gpu_sync"]);
  const CliRun csv = zbsim("compare --scenario " + scenario + " --schedules zb-1p --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_NE(csv.out.find(",samples_per_s_per_gpu,samples_per_s_per_gpu_sync,samples_per_s_per_gpu_post_validation,"
                         "tokens_per_s,tokens_per_s_sync,tokens_per_s_post_validation,mfu,mfu_sync,"
                         "mfu_post_validation,memory_GB,memory_per_device_GB,reason"),
            std::string::npos)
      << csv.out;
  const CliRun table = zbsim("compare --scenario " + scenario + " --schedules zb-1p");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("samples/s/GPU"), std::string::npos) << table.out;
  EXPECT_EQ(table.out.find("mfu_sync"), std::string::npos) << table.out;  // a column, not a line
}

// data_parallel 4: four pipelines of the 1.5B model on 4 nodes, a device's four replicas on one node
// (the pipeline outermost), so each stage's gradients are all-reduced over NVLink, beside the
// compute after the stage's last W: the step takes longer, and not by the whole reduction where a
// schedule leaves compute after a last W.
TEST_F(Cli, DataParallelismAddsTheGradientAllReduce) {
  const fs::path plain = write("dp1.json", R"({"model": "gpt-1.5b", "hardware": "a100-80gb", "cluster": "4x8-ib200",
      "microbatch_size": 6, "split": "paper", "problem": {"p": 8, "m": 24}})");
  const fs::path data_parallel = write("dp4.json", R"({"model": "gpt-1.5b", "hardware": "a100-80gb",
      "cluster": "4x8-ib200", "microbatch_size": 6, "split": "paper", "data_parallel": 4, "problem": {"p": 8, "m": 24}})");
  auto rows = [&](const fs::path& file) {
    const CliRun run = zbsim("compare --scenario " + file.string() + " --schedules 1f1b,zb-h1 --format json");
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return run.exit_code == 0 ? nlohmann::json::parse(run.out) : nlohmann::json();
  };
  const auto one = rows(plain);
  const auto four = rows(data_parallel);
  ASSERT_TRUE(four["problem"].contains("t_dp_reduce")) << four["problem"].dump();
  EXPECT_FALSE(one["problem"].contains("t_dp_reduce")) << one["problem"].dump();
  for (int i = 0; i < 2; ++i) {
    const auto& a = one["results"][i];
    const auto& b = four["results"][i];
    EXPECT_GT(b["step_time_sync"].get<double>(), a["step_time_sync"].get<double>()) << b.dump();
    EXPECT_EQ(four["problem"]["t_f"], one["problem"]["t_f"]);  // compute is unchanged
    // Per GPU: four pipelines' samples over four times the GPUs.
    EXPECT_LT(b["samples_per_s_per_gpu_sync"].get<double>(), a["samples_per_s_per_gpu_sync"].get<double>());
    EXPECT_NEAR(b["tokens_per_s_sync"].get<double>() / b["samples_per_s_per_gpu_sync"].get<double>(),
                32 * 1024, 1e-6);
  }
  // 5 pipelines of 8 need 40 GPUs: the 4 x 8 cluster has 32.
  const fs::path crowded = write("dp5.json", R"({"model": "gpt-1.5b", "hardware": "a100-80gb",
      "cluster": "4x8-ib200", "microbatch_size": 6, "data_parallel": 5, "problem": {"p": 8, "m": 24}})");
  const CliRun run = zbsim("compare --scenario " + crowded.string() + " --schedules 1f1b");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("p = 8 devices of 5 GPUs (tensor x data parallel) need 40"), std::string::npos) << run.err;
}

TEST_F(Cli, StepFlagsAreChecked) {
  const std::string base = std::string("compare ") + kUnit + " --schedules zb-h1";
  for (const char* flags : {"--steps 0", "--steps 1001", "--rollback-rate 1.5", "--rollback-rate -0.1",
                            "--rollback-rate nan", "--t-opt -1", "--t-reduce-hop -1", "--t-opt 1,2",
                            "--t-dp-reduce -1", "--t-dp-reduce 1,2,3",
                            "--optimizer-step-time 2"}) {
    const CliRun run = zbsim(base + " " + flags);
    EXPECT_EQ(run.exit_code, 2) << flags << ": " << run.err;
    EXPECT_TRUE(run.out.empty()) << flags;
  }
}

// Every scenario file shipped in scenarios/ loads and runs (issue 16: the model-driven ones fit).
TEST_F(Cli, EveryShippedScenarioRuns) {
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(std::string(ZB_SOURCE_DIR) + "/scenarios")) {
    if (entry.path().extension() != ".json" || entry.path().parent_path().filename() == "sweeps") continue;
    ++files;
    const CliRun run = zbsim("compare --scenario " + entry.path().string() + " --format json");
    ASSERT_EQ(run.exit_code, 0) << entry.path() << "\n" << run.err;
    const auto json = nlohmann::json::parse(run.out);
    ASSERT_FALSE(json["results"].empty()) << entry.path();
    // Model-driven scenarios name the schedules they are for: each must fit the device's memory.
    const bool model_driven = entry.path().parent_path().filename() == "models";
    for (const auto& row : json["results"]) {
      if (model_driven) {
        EXPECT_EQ(row["status"], "ok") << entry.path() << ": " << row.dump();
        EXPECT_TRUE(row.contains("memory_GB")) << entry.path() << ": " << row.dump();
        EXPECT_TRUE(row.contains("memory_per_device_GB")) << entry.path() << ": " << row.dump();
      } else {
        // A scenario of times alone gives no copy time: the schedules that offload say so.
        const bool needs_copy_time = row["status"] == "unsupported" &&
                                     row["reason"].get<std::string>().find("no copy time for offloads") != std::string::npos;
        EXPECT_TRUE(row["status"] == "ok" || row["status"] == "over-limit" || needs_copy_time)
            << entry.path() << ": " << row.dump();
      }
    }
    if (model_driven) {
      EXPECT_TRUE(json.contains("memory")) << entry.path();
    }
  }
  EXPECT_GE(files, 2);
}

// Issue 18's bad inputs (scripts/bad-inputs reruns them all): each is exit 2 at once, the message
// names what is wrong and its limit, and no output is written.
struct HugeInput {
  const char* what;
  const char* file;     // written into the scratch folder as "in" when not empty
  std::string args;     // "IN" stands for that file
  const char* message;  // must appear on stderr
};

TEST_F(Cli, HugeSizesAndBadFilesAreExit2NamingTheLimitAndWriteNothing) {
  const std::string unit = "--tf 1 --tb 1 --tw 1";
  const HugeInput cases[] = {
      {"p 1e9", "", "compare --m 8 " + unit + " --p 1000000000 --schedules zb-h1 --svg o.svg", "over the limit of 10000000"},
      {"m 1e9", "", "compare --p 4 " + unit + " --m 1000000000 --schedules gpipe --svg o.svg", "over the limit of 10000000"},
      {"p x chunks", "", "compare --p 100000 --m 100000 " + unit + " --chunks 100000 --svg o.svg", "actions"},
      {"export p 1e9", "", "export --schedule zb-h1 --p 1000000000 --m 8 --to text --out o.svg", "over the limit"},
      {"frontier", "", "frontier --p 100000 --m 16 " + unit + " --svg o.svg", "over the search limit"},
      {"scenario m", R"({"problem": {"p": 4, "m": 1000000000, "t_f": 1, "t_b": 1, "t_w": 1}})",
       "compare --scenario IN --svg o.svg", "over the limit"},
      {"text microbatch 1e9", "d0: F0 B0 W0 F999999999\n", "simulate --schedule-file IN " + unit + " --svg o.svg",
       "over the limit"},
      {"csv stage 1e9", "0F0,0B0,999999999F0\n", "simulate --schedule-file IN " + unit + " --svg o.svg", "over the limit"},
      {"csv stage int max", "2147483647F0\n", "simulate --schedule-file IN " + unit + " --svg o.svg", "over the limit"},
      {"no devices", R"({"devices": []})", "simulate --schedule-file IN " + unit + " --svg o.svg", "no devices"},
      {"/dev/zero", "", "compare --scenario /dev/zero --svg o.svg", "/dev/zero: larger than the input size limit"},
  };
  for (const HugeInput& c : cases) {
    std::string args = c.args;
    if (*c.file) {
      write("in", c.file);
      args.replace(args.find("IN"), 2, path("in"));
    }
    const CliRun r = zbsim(args);
    EXPECT_EQ(r.exit_code, 2) << c.what << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.what << ": " << r.err;
    if (*c.file) {
      EXPECT_NE(r.err.find(path("in")), std::string::npos) << c.what << ": " << r.err;
    }
    EXPECT_FALSE(fs::exists(dir_ / "o.svg")) << c.what;
  }
}

TEST_F(Cli, AnUnwritableOutputLeavesTheOthersUnwritten) {
  const std::string missing = path("no-such-folder") + "/x";
  for (const std::string& args : {"compare " + std::string(kUnit) + " --svg " + path("ok") + " --chrome " + missing,
                                 "simulate " + std::string(kUnit) + " --trace " + path("ok") + " --svg " + missing,
                                 "solve " + std::string(kUnit) + " --out " + path("ok") + " --lp " + missing}) {
    const CliRun r = zbsim(args);
    EXPECT_EQ(r.exit_code, 2) << args << ": " << r.err;
    EXPECT_NE(r.err.find(missing + ": cannot write"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(dir_ / "ok")) << args;
  }
  fs::create_directory(dir_ / "r.jsonl");
  const CliRun sweep = zbsim("sweep --grid " + std::string(ZB_SOURCE_DIR) + "/scenarios/sweeps/bubble-vs-m.json --out " +
                             path("r.csv"));
  EXPECT_EQ(sweep.exit_code, 2) << sweep.err;
  EXPECT_FALSE(fs::exists(dir_ / "r.csv"));
}

// /dev/stdout is the pipe or the file the shell gave: piped output arrives, and `>>` appends to
// what the file held instead of replacing it.
TEST_F(Cli, DevStdoutWritesToWhatTheShellOpened) {
  const CliRun piped = zbsim("export --schedule zb-h1 --p 2 --m 2 --to text --out /dev/stdout");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_NE(piped.out.find("d0: F0 F1 B0 W0 B1 W1"), std::string::npos) << piped.out;
  {
    std::ofstream(dir_ / "log.txt") << "kept\n";
  }
  const CliRun appended = zbsim("simulate " + std::string(kUnit) + " --chrome /dev/stdout >> " + path("log.txt"));
  ASSERT_EQ(appended.exit_code, 0) << appended.err;
  const std::string log = slurp(dir_ / "log.txt");
  EXPECT_EQ(log.rfind("kept\n", 0), 0u) << log.substr(0, 80);
  EXPECT_NE(log.find("traceEvents"), std::string::npos);
}

}  // namespace

namespace {

class PartitionCli : public zb::testing::CliTest {
 protected:
  CliRun zbsim(const std::string& args) { return run(ZBSIM_PATH, args); }
  static std::string scenario(const std::string& name) {
    return std::string(ZB_SOURCE_DIR) + "/scenarios/models/" + name + ".json";
  }
};

TEST_F(PartitionCli, PrintsTheChosenSplitAgainstEvenAndPaperWithFrameworkSettings) {
  const CliRun run = zbsim("partition --scenario " + scenario("llama3-8b-h200-p8-m32") + " --schedule zb-h1 --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto out = nlohmann::json::parse(run.out);
  ASSERT_TRUE(out["chosen"].is_string());
  std::map<std::string, double> times;
  for (const auto& trial : out["trials"]) times[trial["split"]] = trial["step_time"];
  ASSERT_TRUE(times.contains("even") && times.contains("paper"));
  double chosen_time = times[out["chosen"].get<std::string>()];
  EXPECT_LE(chosen_time, times["even"]);
  EXPECT_LE(chosen_time, times["paper"]);
  ASSERT_EQ(out["stages"].size(), 8u);
  const auto& fqns = out["torchtitan_module_fqns_per_model_part"];
  ASSERT_EQ(fqns.size(), 8u);
  EXPECT_EQ(fqns.front().front(), "tok_embeddings");
  EXPECT_EQ(fqns.back().back(), "output");
  const std::string layout = out["megatron_pipeline_model_parallel_layout"];
  EXPECT_EQ(layout.front(), 'E');
  EXPECT_EQ(layout.back(), 'L');
  EXPECT_EQ(std::count(layout.begin(), layout.end(), '|'), 7);
  // Same inputs, same bytes; the table says the same.
  EXPECT_EQ(zbsim("partition --scenario " + scenario("llama3-8b-h200-p8-m32") + " --schedule zb-h1 --format json").out,
            run.out);
  const CliRun table = zbsim("partition --scenario " + scenario("llama3-8b-h200-p8-m32") + " --schedule zb-h1");
  ASSERT_EQ(table.exit_code, 0);
  EXPECT_NE(table.out.find("--pipeline-model-parallel-layout \"" + layout + "\""), std::string::npos);
  EXPECT_NE(table.out.find("module_fqns_per_model_part = "), std::string::npos);
}

TEST_F(PartitionCli, SaysWhenNoSplitFitsAndRefusesBadInput) {
  // Llama-2 70B at p=32 with recomputation: zb-h1 keeps every W's activations, no split fits.
  const CliRun none = zbsim("partition --scenario " + scenario("llama2-70b-a100-p32-m64") + " --schedule zb-h1");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no split fits"), std::string::npos) << none.err;
  EXPECT_EQ(zbsim("partition --p 4 --m 8 --tf 1 --tb 1 --tw 1").exit_code, 2);  // no model to split
  const CliRun csv = zbsim("partition --scenario " + scenario("llama3-8b-h200-p8-m32") + " --format csv");
  EXPECT_EQ(csv.exit_code, 2);
  EXPECT_EQ(csv.out, "");
}

}  // namespace
