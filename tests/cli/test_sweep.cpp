// zbsim sweep and plot as a user runs them: shards, resume, parallel runs, bad grids, charts.
#include <gtest/gtest.h>
#include <cstdlib>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/testing/cli_test.h"

namespace {

namespace fs = std::filesystem;
using zb::testing::CliRun;
using zb::testing::slurp;

class Sweep : public zb::testing::CliTest {
 protected:
  CliRun zbsim(const std::string& args) { return run(ZBSIM_PATH, args); }
};

// A small grid of direct problems: 3 x 2 x 4 = 24 points, costs where schedules differ.
const char* kGrid = R"({
  "name": "test",
  "base": {"problem": {"p": 4, "t_f": 1, "t_b": 1.2, "t_w": 0.6, "t_comm": 0.05, "mem_limit": "2p"}},
  "axes": {"m": [4, 8, 16], "t_comm": [0, 0.1], "schedule": ["gpipe", "1f1b", "zb-h1", "zb-h2"]}
})";

TEST_F(Sweep, WritesOneRowPerPointInPointOrderAsCsvAndJsonLines) {
  const auto grid = write("grid.json", kGrid);
  const CliRun run = zbsim("sweep --grid " + grid.string() + " --out " + path("r.csv") + " --jobs 2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("24 points"), std::string::npos) << run.out;
  std::istringstream csv(slurp(path("r.csv")));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("point,model,hardware,cluster,microbatch_size,p,m,chunks,placement,schedule,engine,", 0), 0u);
  int rows = 0;
  while (std::getline(csv, line)) {
    EXPECT_EQ(line.rfind(std::to_string(rows) + ",", 0), 0u) << line;
    ++rows;
  }
  EXPECT_EQ(rows, 24);
  std::istringstream jsonl(slurp(path("r.jsonl")));
  int n = 0;
  while (std::getline(jsonl, line)) {
    const auto row = nlohmann::json::parse(line);
    EXPECT_EQ(row["point"], n);
    ++n;
    if (row["schedule"] == "gpipe" && row["m"] == 16) {
      EXPECT_EQ(row["status"], "over-limit");  // 16 microbatches of activations > 2p = 8
    }
    if (row["axes"]["t_comm"] == 0 && row["m"] == 8 && row["schedule"] == "1f1b") {
      // 1F1B bubble (p-1)(t_f+t_b+t_w) on a span of m(t_f+t_b+t_w) + that.
      EXPECT_DOUBLE_EQ(row["span"].get<double>(), 8 * 2.8 + 3 * 2.8);
      EXPECT_EQ(row["t_comm"], 0);
    }
  }
  EXPECT_EQ(n, 24);
}

TEST_F(Sweep, ThreeShardsMergeIntoTheFullSweep) {
  const auto grid = write("grid.json", kGrid);
  ASSERT_EQ(zbsim("sweep --grid " + grid.string() + " --out " + path("full.csv") + " --jobs 1").exit_code, 0);
  std::string shards;
  for (int i = 1; i <= 3; ++i) {
    const std::string out = path("shard" + std::to_string(i) + ".csv");
    const CliRun run = zbsim("sweep --grid " + grid.string() + " --out " + out + " --shard " + std::to_string(i) + "/3");
    ASSERT_EQ(run.exit_code, 0) << run.err;
    EXPECT_NE(run.out.find("(shard " + std::to_string(i) + "/3: 8)"), std::string::npos) << run.out;
    shards += " " + out;
  }
  const CliRun merged = zbsim("sweep --merge" + shards + " --out " + path("merged.csv"));
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  EXPECT_EQ(slurp(path("merged.csv")), slurp(path("full.csv")));
  EXPECT_EQ(slurp(path("merged.jsonl")), slurp(path("full.jsonl")));
  // Shard 2/3 holds the points i with i % 3 == 1.
  std::istringstream shard2(slurp(path("shard2.csv")));
  std::string line;
  std::getline(shard2, line);
  std::getline(shard2, line);
  EXPECT_EQ(line.rfind("1,", 0), 0u);
}

TEST_F(Sweep, ParallelAndSerialRunsAreByteIdentical) {
  const auto grid = write("grid.json", kGrid);
  ASSERT_EQ(zbsim("sweep --grid " + grid.string() + " --out " + path("a.csv") + " --jobs 1").exit_code, 0);
  ASSERT_EQ(zbsim("sweep --grid " + grid.string() + " --out " + path("b.csv") + " --jobs 4").exit_code, 0);
  EXPECT_EQ(slurp(path("a.csv")), slurp(path("b.csv")));
  EXPECT_EQ(slurp(path("a.jsonl")), slurp(path("b.jsonl")));
}

TEST_F(Sweep, AResumedSweepEqualsAnUninterruptedOne) {
  const auto grid = write("grid.json", kGrid);
  ASSERT_EQ(zbsim("sweep --grid " + grid.string() + " --out " + path("full.csv")).exit_code, 0);
  const std::string csv = slurp(path("full.csv"));
  const std::string jsonl = slurp(path("full.jsonl"));
  // A sweep killed while writing: 10 whole CSV rows and a torn 11th; 9 whole JSON lines and a torn 10th.
  std::size_t cut = 0;
  for (int i = 0; i < 11; ++i) cut = csv.find('\n', cut) + 1;
  std::ofstream(path("r.csv"), std::ios::binary) << csv.substr(0, cut) + csv.substr(cut, 7);
  cut = 0;
  for (int i = 0; i < 9; ++i) cut = jsonl.find('\n', cut) + 1;
  std::ofstream(path("r.jsonl"), std::ios::binary) << jsonl.substr(0, cut) + jsonl.substr(cut, 12);
  const CliRun run = zbsim("sweep --grid " + grid.string() + " --out " + path("r.csv") + " --resume");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("9 already done, ran 15"), std::string::npos) << run.out;
  EXPECT_EQ(slurp(path("r.csv")), csv);
  EXPECT_EQ(slurp(path("r.jsonl")), jsonl);
  // Resuming a finished sweep runs nothing and changes nothing.
  const CliRun again = zbsim("sweep --grid " + grid.string() + " --out " + path("r.csv") + " --resume");
  EXPECT_NE(again.out.find("24 already done, ran 0"), std::string::npos) << again.out;
  EXPECT_EQ(slurp(path("r.csv")), csv);
}

TEST_F(Sweep, ResumingWithAnotherGridIsRefused) {
  const auto grid = write("grid.json", kGrid);
  ASSERT_EQ(zbsim("sweep --grid " + grid.string() + " --out " + path("r.csv")).exit_code, 0);
  std::string changed = kGrid;
  changed.replace(changed.find("[4, 8, 16]"), 10, "[4, 6, 16]");
  const auto other = write("other.json", changed);
  const CliRun run = zbsim("sweep --grid " + other.string() + " --out " + path("r.csv") + " --resume");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("r.jsonl: line 9: point 8 was run with"), std::string::npos) << run.err;
}

TEST_F(Sweep, PointsThatCannotRunAreRowsNotCrashes) {
  // 22 layers cannot fill 32 stages; Llama-2 70B does not fit on 8 A100s; both are rows.
  const auto grid = write("grid.json", R"({
    "base": {"hardware": "a100-80gb", "microbatch_size": 1, "problem": {"m": 16}},
    "axes": {"model": ["gpt-1.5b", "llama2-70b"], "p": [8, 32], "schedule": ["1f1b", "zb-h1"]}})");
  const CliRun run = zbsim("sweep --grid " + grid.string() + " --out " + path("r.csv"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream jsonl(slurp(path("r.jsonl")));
  std::string line;
  std::map<std::string, int> status;
  while (std::getline(jsonl, line)) {
    const auto row = nlohmann::json::parse(line);
    ++status[row["status"].get<std::string>()];
    if (row["model"] == "gpt-1.5b" && row["p"] == 32) {
      EXPECT_EQ(row["status"], "infeasible");
      EXPECT_NE(row["reason"].get<std::string>().find("22 layers cannot fill 32 stages"), std::string::npos);
    }
    if (row["model"] == "llama2-70b" && row["p"] == 8) {
      EXPECT_EQ(row["status"], "infeasible");
      EXPECT_NE(row["reason"].get<std::string>().find("parameters, gradients and optimizer state"), std::string::npos);
    }
    if (row["model"] == "gpt-1.5b" && row["p"] == 8) {
      EXPECT_EQ(row["status"], "ok");
      EXPECT_EQ(row["mem_limit"], "auto");
      EXPECT_GT(row["samples_per_s_per_gpu"].get<double>(), 0);
    }
  }
  EXPECT_EQ(status["infeasible"], 4 + 0);  // gpt p=32 (2 rows) and llama2-70b p=8 (2 rows)
}

// One over-limit judgement: a schedule over the limit is "over-limit" with its metrics on every
// engine (the SimGrid engine used to refuse it, which the sweep showed as "infeasible").
TEST_F(Sweep, OverLimitPointsKeepTheirMetricsOnEveryEngine) {
  const auto grid = write("grid.json", R"({
    "base": {"problem": {"p": 4, "m": 8, "t_f": 1, "t_b": 1, "t_w": 1, "mem_limit": "1p"}},
    "axes": {"engine": ["eval", "simgrid"], "schedule": ["gpipe", "1f1b"]}})");
  const CliRun run = zbsim("sweep --grid " + grid.string() + " --out " + path("r.csv"));
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream jsonl(slurp(path("r.jsonl")));
  std::string line;
  int rows = 0;
  while (std::getline(jsonl, line)) {
    const auto row = nlohmann::json::parse(line);
    ++rows;
    if (row["schedule"] == "gpipe") {
      EXPECT_EQ(row["status"], "over-limit") << line;
      EXPECT_EQ(row["reason"], "d0 peaks at 8 > limit 4 (1p)") << line;
      EXPECT_DOUBLE_EQ(row["span"].get<double>(), 33) << line;
    } else {
      EXPECT_EQ(row["status"], "ok") << line;
    }
    EXPECT_TRUE(row.contains("samples_per_s_per_gpu")) << line;  // ms is a real unit
  }
  EXPECT_EQ(rows, 4);
}

struct BadGrid {
  const char* json;
  const char* message;
};

TEST_F(Sweep, BadGridsExitTwoNamingFileFieldAndValue) {
  const BadGrid cases[] = {
      {R"({"axes": {"mm": [1, 2]}, "base": {"problem": {"p": 2, "t_f": 1, "t_b": 1, "t_w": 1}}})",
       "grid.json: axis 'mm' is not a scenario field (known: schedule, engine, model"},
      {R"({"axes": {"m": 8, "schedule": ["1f1b"]}, "base": {"problem": {"p": 2, "t_f": 1, "t_b": 1, "t_w": 1}}})",
       "grid.json: axis 'm' is 8: expected a non-empty list of values"},
      {R"({"axes": {"m": [4, 0], "schedule": ["1f1b"]}, "base": {"problem": {"p": 2, "t_f": 1, "t_b": 1, "t_w": 1}}})",
       "grid.json: axis 'm' value 0: m is 0: give the number of microbatches (--m N, or \"m\" in a scenario's problem), at least 1"},
      {R"({"axes": {"m": [4], "schedule": ["1f1b", "zb-h9"]}, "base": {"problem": {"p": 2, "t_f": 1, "t_b": 1, "t_w": 1}}})",
       "grid.json: axis 'schedule' value \"zb-h9\": "},
      {R"({"axes": {"mem_limit": ["2p", "3x"], "schedule": ["1f1b"]}, "base": {"problem": {"p": 2, "m": 4, "t_f": 1, "t_b": 1, "t_w": 1}}})",
       "grid.json: axis 'mem_limit' value \"3x\": problem: field 'mem_limit': bad memory limit '3x'"},
      {R"({"axes": {"model": ["gpt-1.5b", "gpt-2b"]}, "base": {"hardware": "h200", "problem": {"p": 2, "m": 4}, "schedules": ["1f1b"]}})",
       "grid.json: axis 'model' value \"gpt-2b\": field 'model' is 'gpt-2b': no such preset"},
      {R"({"axes": {"m": [4]}, "base": {"problem": {"p": 2, "t_f": 1, "t_b": 1, "t_w": 1}}})",
       "grid.json: no schedules: add an axis 'schedule'"},
      {R"({"axis": {"m": [4]}})", "grid.json: unknown field 'axis' (known: name, description, scenario, base, engine, axes)"},
      {R"({"axes": {"m": [4)", "grid.json: malformed JSON"},
      {R"({"axes": {"engine": ["eval", "gpu"], "schedule": ["1f1b"]}, "base": {"problem": {"p": 2, "m": 4, "t_f": 1, "t_b": 1, "t_w": 1}}})",
       "grid.json: axis 'engine' value \"gpu\": --engine: unknown engine 'gpu'"},
  };
  for (const auto& c : cases) {
    write("grid.json", c.json);
    const CliRun run = zbsim("sweep --grid " + path("grid.json") + " --out " + path("r.csv"));
    EXPECT_EQ(run.exit_code, 2) << c.json << "\n" << run.err;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << "expected: " << c.message << "\ngot: " << run.err;
    EXPECT_FALSE(fs::exists(path("r.csv"))) << c.json;  // nothing written for bad input
  }
  const CliRun shard = zbsim("sweep --grid " + write("g.json", kGrid).string() + " --out " + path("r.csv") + " --shard 4/3");
  EXPECT_EQ(shard.exit_code, 2);
  EXPECT_NE(shard.err.find("--shard: '4/3': expected I/N with 1 <= I <= N"), std::string::npos) << shard.err;
}

TEST_F(Sweep, ShippedGridsRunAndPlot) {
  for (const auto& name : {"bubble-vs-m", "memory-limit", "models"}) {
    const std::string grid = std::string(ZB_SOURCE_DIR) + "/scenarios/sweeps/" + name + ".json";
    const CliRun run = zbsim("sweep --grid " + grid + " --out " + path("r.csv"));
    ASSERT_EQ(run.exit_code, 0) << name << "\n" << run.err;
    const CliRun plot = zbsim("plot " + path("r.csv") + " --svg " + path("r.svg"));
    ASSERT_EQ(plot.exit_code, 0) << name << "\n" << plot.err;
    const std::string svg = slurp(path("r.svg"));
    EXPECT_EQ(svg.rfind("<svg", 0), 0u);
    EXPECT_NE(svg.find("Peak activation memory per device"), std::string::npos) << name;
  }
  // bubble-vs-m: a line per schedule over m; zb-h2 leaves less bubble than 1f1b at every m.
  const CliRun run = zbsim("sweep --grid " + std::string(ZB_SOURCE_DIR) + "/scenarios/sweeps/bubble-vs-m.json --out " +
                           path("b.csv"));
  ASSERT_EQ(run.exit_code, 0);
  ASSERT_EQ(zbsim("plot " + path("b.csv") + " --svg " + path("b.svg") + " --chart bubble").exit_code, 0);
  const std::string svg = slurp(path("b.svg"));
  EXPECT_NE(svg.find("Bubble rate vs microbatches"), std::string::npos);
  EXPECT_EQ(svg.find("Throughput vs memory limit"), std::string::npos);
  std::map<int, std::map<std::string, double>> bubble;
  std::istringstream jsonl(slurp(path("b.jsonl")));
  std::string line;
  while (std::getline(jsonl, line)) {
    const auto row = nlohmann::json::parse(line);
    bubble[row["m"].get<int>()][row["schedule"].get<std::string>()] = row["bubble_rate"].get<double>();
  }
  for (const auto& [m, rates] : bubble) EXPECT_LT(rates.at("zb-h2"), rates.at("1f1b")) << m;
}

// A worker killed from outside (as the OOM killer would) does not lose its points: they run
// again in a new worker and the result equals an undisturbed run, byte for byte.
TEST_F(Sweep, AKilledWorkerIsReplacedAndNoPointGoesMissing) {
  const auto grid = write("grid.json", R"({
    "engine": "simgrid",
    "base": {"problem": {"p": 8, "t_f": 1, "t_b": 1, "t_w": 1, "t_comm": 0.1}},
    "axes": {"m": [8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52], "schedule": ["1f1b", "zb-h1", "zb-h2"]}})");
  const CliRun clean = zbsim("sweep --grid " + grid.string() + " --out " + path("clean.csv") + " --jobs 2");
  if (clean.exit_code == 2 && clean.err.find("without SimGrid") != std::string::npos) GTEST_SKIP() << clean.err;
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  // Start the same sweep, wait for its first rows, kill -9 one of its two workers.
  const std::string script = fmt::format(
      "{} sweep --grid {} --out {} --jobs 2 2> {} & sweep=$!; "
      "for i in $(seq 1 600); do [ -s {} ] && break; sleep 0.01; done; "
      "worker=$(pgrep -P $sweep | head -n 1); [ -n \"$worker\" ] && kill -9 $worker; "
      "wait $sweep; echo $? > {}; echo $worker > {}",
      ZBSIM_PATH, grid.string(), path("r.csv"), path("err.txt"), path("r.jsonl"), path("rc.txt"), path("pid.txt"));
  ASSERT_EQ(std::system(script.c_str()), 0);
  if (slurp(path("pid.txt")) == "\n") GTEST_SKIP() << "the sweep ended before a worker could be killed";
  EXPECT_EQ(slurp(path("rc.txt")), "0\n") << slurp(path("err.txt"));
  EXPECT_NE(slurp(path("err.txt")).find("killed by signal 9"), std::string::npos) << slurp(path("err.txt"));
  EXPECT_NE(slurp(path("err.txt")).find("remaining points run again"), std::string::npos) << slurp(path("err.txt"));
  EXPECT_EQ(slurp(path("r.csv")), slurp(path("clean.csv")));
  EXPECT_EQ(slurp(path("r.jsonl")), slurp(path("clean.jsonl")));
}

// The cost model's t_comm (activation bytes over the cluster's links) and the SimGrid engine's
// transfers of the same bytes over the same cluster agree: no contention on these shapes.
TEST_F(Sweep, CostModelLinksAgreeWithTheSimgridEngine) {
  const std::string grid = std::string(ZB_SOURCE_DIR) + "/scenarios/sweeps/simgrid-clusters.json";
  const CliRun simgrid = zbsim("sweep --grid " + grid + " --out " + path("sg.csv") + " --jobs 2");
  if (simgrid.exit_code == 2 && simgrid.err.find("without SimGrid") != std::string::npos) GTEST_SKIP() << simgrid.err;
  ASSERT_EQ(simgrid.exit_code, 0) << simgrid.err;
  auto eval_grid = nlohmann::ordered_json::parse(slurp(grid));  // keeps the axis order
  eval_grid["engine"] = "eval";
  eval_grid["base"]["cluster"] = nullptr;
  write("eval.json", eval_grid.dump());
  ASSERT_EQ(zbsim("sweep --grid " + path("eval.json") + " --out " + path("ev.csv")).exit_code, 0);
  std::istringstream a(slurp(path("sg.jsonl")));
  std::istringstream b(slurp(path("ev.jsonl")));
  std::string la, lb;
  int compared = 0;
  while (std::getline(a, la) && std::getline(b, lb)) {
    const auto rs = nlohmann::json::parse(la);
    const auto re = nlohmann::json::parse(lb);
    ASSERT_EQ(rs["status"], re["status"]) << la << "\n" << lb;
    if (rs["status"] != "ok" || rs["schedule"] == "zb-h1") continue;  // zb-h1: SimGrid queues sends per stream
    // Within 1e-8: a device's 8-byte all-reduce partial leaves with its last gradient and shares
    // the link with it (the evaluator's t_comm has the link to itself).
    EXPECT_NEAR(rs["makespan"].get<double>(), re["makespan"].get<double>(), 1e-8 * re["makespan"].get<double>())
        << la;
    ++compared;
  }
  EXPECT_EQ(compared, 12);
}

TEST_F(Sweep, PlotRejectsFilesThatAreNotResults) {
  write("x.csv", "a,b\n1,2\n");
  const CliRun run = zbsim("plot " + path("x.csv") + " --svg " + path("x.svg"));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("x.csv: no column 'point': not a results file of zbsim sweep"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(path("x.svg")));
}

TEST_F(Sweep, ModelDrivenScenariosRunThroughCompare) {
  const std::string scenario = std::string(ZB_SOURCE_DIR) + "/scenarios/models/paper-gpt-1.5b-p8-m24.json";
  const CliRun run = zbsim("compare --scenario " + scenario + " --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["problem"]["t_f"].size(), 8u);  // the paper's split: first and last stage differ
  EXPECT_GT(json["problem"]["mem_limit"].get<double>(), 50);  // GB left on an 80 GB A100
  // Flags override the model: p = 4 rederives every stage.
  const CliRun p4 = zbsim("compare --scenario " + scenario + " --p 4 --schedules 1f1b --format json");
  ASSERT_EQ(p4.exit_code, 0) << p4.err;
  EXPECT_EQ(nlohmann::json::parse(p4.out)["problem"]["t_f"].size(), 4u);
  const CliRun bad = zbsim("compare --p 4 --m 8 --tf 1 --tb 1 --tw 1 --mem-limit auto");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--mem-limit auto: needs a model-driven scenario"), std::string::npos) << bad.err;
}

}  // namespace
