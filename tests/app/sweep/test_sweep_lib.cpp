// The sweep library without the command line: grid expansion, shards, resume, the two writers,
// merging shards, and the charts of a results table.
#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/support/error.h"
#include "sim/app/sweep/chart.h"
#include "sim/app/sweep/grid.h"
#include "sim/app/sweep/output.h"
#include "sim/app/sweep/plot.h"
#include "sim/app/sweep/row.h"
#include "sim/app/sweep/run.h"
#include "sim/app/sweep/table.h"
#include "tests/testing/cli_test.h"
#include "tests/testing/input_error.h"

namespace {

namespace fs = std::filesystem;
using zb::testing::error_of;
using zb::testing::slurp;
namespace sweep = zb::sweep;

// 3 x 2 x 4 = 24 points of direct problems, costs where the schedules differ.
const char* kGrid = R"({
  "name": "lib",
  "base": {"problem": {"p": 4, "t_f": 1, "t_b": 1.2, "t_w": 0.6, "t_comm": 0.05, "mem_limit": "2p"}},
  "axes": {"m": [4, 8, 16], "t_comm": [0, 0.1], "schedule": ["gpipe", "1f1b", "zb-h1", "zb-h2"]}
})";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

class SweepLib : public zb::testing::CliTest {
 protected:
  sweep::Grid grid(const char* json = kGrid) { return sweep::load_grid(write("grid.json", json).string()); }

  sweep::RunReport run(const sweep::Grid& g, const std::string& out, int jobs = 1, sweep::Shard shard = {},
                       bool resume = false) {
    sweep::RunOptions options;
    options.out = path(out);
    options.jobs = jobs;
    options.shard = shard;
    options.resume = resume;
    return sweep::run(g, options);
  }
};

// --- grid expansion ---

TEST_F(SweepLib, PointCountIsTheProductOfTheAxes) {
  EXPECT_EQ(grid().size(), 24);
  // Without a schedule axis the base's schedule list is the last axis.
  const sweep::Grid g = grid(R"({"base": {"problem": {"p": 2, "t_f": 1, "t_b": 1, "t_w": 1},
                                          "schedules": ["1f1b", "zb-h1", "gpipe"]},
                                 "axes": {"m": [2, 4]}})");
  EXPECT_EQ(g.size(), 6);
  ASSERT_EQ(g.axes.size(), 2u);
  EXPECT_EQ(g.axes.back().key, "schedule");
  EXPECT_EQ(g.point(1).schedule, "zb-h1");
  EXPECT_EQ(g.point(3).schedule, "1f1b");
  EXPECT_EQ(g.point(3).scenario["problem"]["m"], 4);
  EXPECT_FALSE(g.point(3).scenario.contains("schedules"));
}

TEST_F(SweepLib, PointsRunInFileOrderWithTheLastAxisFastest) {
  const sweep::Grid g = grid();
  const double comms[] = {0, 0.1};
  const char* schedules[] = {"gpipe", "1f1b", "zb-h1", "zb-h2"};
  long index = 0;
  for (const int m : {4, 8, 16}) {
    for (const double comm : comms) {
      for (const char* schedule : schedules) {
        const sweep::Point point = g.point(index);
        EXPECT_EQ(point.index, index);
        EXPECT_EQ(nlohmann::json(point.axes), nlohmann::json({{"m", m}, {"t_comm", comm}, {"schedule", schedule}}))
            << index;
        EXPECT_EQ(point.axes.begin().key(), "m");  // in file order
        ++index;
      }
    }
  }
}

TEST_F(SweepLib, AxisValuesAreAppliedToTheBaseScenario) {
  const sweep::Grid g = grid(R"({"base": {"model": "gpt-1.5b", "hardware": "h200", "problem": {"p": 4, "t_comm": 0.05}},
                                 "engine": "eval",
                                 "axes": {"m": [4, 8], "microbatch_size": [1, 2], "engine": ["eval"],
                                          "schedule": ["1f1b", "zb-h1"]}})");
  const sweep::Point point = g.point(7);  // m 8, microbatch_size 2, eval, zb-h1
  EXPECT_EQ(point.scenario["problem"]["m"], 8);
  EXPECT_EQ(point.scenario["problem"]["p"], 4);          // the base stays
  EXPECT_EQ(point.scenario["problem"]["t_comm"], 0.05);  // not an axis here
  EXPECT_EQ(point.scenario["microbatch_size"], 2);       // model fields sit at the top level
  EXPECT_FALSE(point.scenario["problem"].contains("microbatch_size"));
  EXPECT_FALSE(point.scenario["problem"].contains("schedule"));
  EXPECT_EQ(point.schedule, "zb-h1");
  EXPECT_EQ(point.engine, "eval");
  // microbatch_size is a fixed column, "engine" too: no extra columns.
  EXPECT_TRUE(g.extra_columns().empty());
}

TEST_F(SweepLib, TheInlineBaseMergesIntoTheScenarioFileFieldByField) {
  write("scenario.json", R"({"problem": {"p": 4, "m": 8, "t_f": 1, "t_b": 1, "t_w": 1, "t_comm": 0.5},
                             "schedules": ["1f1b"]})");
  const sweep::Grid g = grid(R"({"scenario": "scenario.json", "base": {"problem": {"t_comm": 0}},
                                 "axes": {"mem_b": [-0.5]}})");
  EXPECT_EQ(g.base["problem"]["t_comm"], 0);
  EXPECT_EQ(g.base["problem"]["m"], 8);
  EXPECT_EQ(g.extra_columns(), std::vector<std::string>{"mem_b"});  // not a fixed column
}

TEST_F(SweepLib, BadGridsAreInputErrorsNamingFileFieldAndValue) {
  const std::string file = path("grid.json");
  EXPECT_EQ(error_of([&] {
              grid(R"({"axes": {"m": [4, 0], "schedule": ["1f1b"]},
                                    "base": {"problem": {"p": 2, "t_f": 1, "t_b": 1, "t_w": 1}}})");
            }).rfind(file + ": axis 'm' value 0: m is 0", 0),
            0u);
  EXPECT_EQ(error_of([&] {
              grid(R"({"axes": {"m": [4], "schedule": ["1f1b", "zb-h9"]},
                                    "base": {"problem": {"p": 2, "t_f": 1, "t_b": 1, "t_w": 1}}})");
            }).rfind(file + ": axis 'schedule' value \"zb-h9\": ", 0),
            0u);
  EXPECT_EQ(error_of([&] { grid(R"({"axes": {"mm": [1]}})"); }).rfind(file + ": axis 'mm' is not a scenario field", 0),
            0u);
  EXPECT_EQ(error_of([&] { grid(R"({"axes": {"m": []}})"); }),
            file + ": axis 'm' is []: expected a non-empty list of values");
  EXPECT_EQ(error_of([&] {
              grid(R"({"axes": {"m": [4]}, "base": {"problem": {"p": 2}}})");
            }).rfind(file + ": no schedules", 0),
            0u);
}

// 16 axes of 16 values are 16^16 = 2^64 points, which wraps a 64-bit count to exactly 0: that
// used to run "0 points" and exit 0.
TEST_F(SweepLib, AGridOfTooManyPointsIsAnInputErrorNotAWrappedCount) {
  const char* keys[] = {
      "p",     "m",         "chunks",          "t_f",     "t_b", "t_w",         "t_comm",         "mem_f", "mem_b",
      "mem_w", "bytes_act", "microbatch_size", "seq_len", "mfu", "reserved_GB", "bytes_per_param"};
  nlohmann::ordered_json axes = nlohmann::ordered_json::object();
  std::vector<int> values(16);
  for (int i = 0; i < 16; ++i) values[i] = i + 1;
  for (const char* key : keys) axes[key] = values;
  const nlohmann::ordered_json json = {
      {"base", {{"problem", {{"p", 2}, {"t_f", 1}, {"t_b", 1}, {"t_w", 1}}}, {"schedules", {"1f1b"}}}}, {"axes", axes}};
  unsigned long long wrapped = 1;
  for (int i = 0; i < 16; ++i) wrapped *= 16;
  ASSERT_EQ(wrapped, 0u);  // what the old count saw
  const std::string message = error_of([&] { grid(json.dump().c_str()); });
  EXPECT_EQ(message.rfind(path("grid.json") + ": too many points: 16 x 16 x 16", 0), 0u) << message;
  EXPECT_NE(message.find(" x 1 (more than 10000000)"), std::string::npos) << message;  // the schedule axis last
}

TEST_F(SweepLib, TheLimitIsTenMillionPointsExactly) {
  // 7 axes of 10 values: exactly the limit, accepted (values are checked, points are not expanded).
  const char* at_limit = R"({"base": {"problem": {"p": 2, "t_f": 1, "t_b": 1, "t_w": 1}, "schedules": ["1f1b"]},
    "axes": {"m": [1,2,3,4,5,6,7,8,9,10], "t_f": [1,2,3,4,5,6,7,8,9,10], "t_b": [1,2,3,4,5,6,7,8,9,10],
             "t_w": [1,2,3,4,5,6,7,8,9,10], "t_comm": [0,1,2,3,4,5,6,7,8,9], "t_bw": [1,2,3,4,5,6,7,8,9,10],
             "p": [1,2,3,4,5,6,7,8,9,10]}})";
  EXPECT_EQ(grid(at_limit).size(), sweep::kMaxPoints);
  EXPECT_EQ(sweep::kMaxPoints, 10'000'000);
  const sweep::Grid last = grid(at_limit);
  EXPECT_EQ(last.point(sweep::kMaxPoints - 1).axes.dump(),
            R"({"m":10,"t_f":10,"t_b":10,"t_w":10,"t_comm":9,"t_bw":10,"p":10,"schedule":"1f1b"})");
  // One value more on one axis is over it.
  std::string over = at_limit;
  over.replace(over.find("\"p\": [1,"), 8, "\"p\": [1,11,");
  EXPECT_NE(error_of([&] {
              grid(over.c_str());
            }).find("too many points: 10 x 10 x 10 x 10 x 10 x 10 x 11 x 1 (more than 10000000)"),
            std::string::npos);
}

// --- shards ---

TEST_F(SweepLib, ShardsPartitionThePoints) {
  for (long n = 1; n <= 7; ++n) {
    std::vector<long> all;
    for (long k = 0; k < n; ++k) {
      const sweep::Shard shard{k, n};
      const std::vector<long> points = shard.points(24);
      for (const long point : points) {
        EXPECT_EQ(point % n, k);
        EXPECT_TRUE(shard.contains(point));
        for (long other = 0; other < n; ++other) EXPECT_EQ(sweep::Shard({other, n}).contains(point), other == k);
      }
      EXPECT_TRUE(std::is_sorted(points.begin(), points.end()));
      all.insert(all.end(), points.begin(), points.end());
    }
    std::sort(all.begin(), all.end());
    std::vector<long> expected(24);
    for (long i = 0; i < 24; ++i) expected[i] = i;
    EXPECT_EQ(all, expected) << n << " shards";  // the union is every point, each once
  }
  EXPECT_TRUE(sweep::Shard({5, 8}).points(3).empty());  // more shards than points
}

TEST_F(SweepLib, ShardsAreWrittenOneBased) {
  const sweep::Shard shard = sweep::parse_shard("2/8");
  EXPECT_EQ(shard.index, 1);
  EXPECT_EQ(shard.count, 8);
  for (const char* bad : {"0/3", "4/3", "3", "a/b", "1/0", "1/3x", "-1/3"}) {
    EXPECT_EQ(error_of([&] { sweep::parse_shard(bad); }),
              std::string("--shard: '") + bad + "': expected I/N with 1 <= I <= N, e.g. 2/8");
  }
}

// --- writers ---

TEST_F(SweepLib, CsvAndJsonLinesHoldOneRowPerPointInPointOrder) {
  const sweep::Grid g = grid();
  const sweep::RunReport report = run(g, "r.csv", 4);
  EXPECT_EQ(report.total, 24);
  EXPECT_EQ(report.ran, 24);
  EXPECT_EQ(report.kept, 0);
  long rows = 0;
  for (const auto& [status, count] : report.statuses) rows += count;
  EXPECT_EQ(rows, 24);
  EXPECT_GT(report.statuses.at("over-limit"), 0);
  EXPECT_EQ(sweep::jsonl_path_for(path("r.csv")), path("r.jsonl"));
  const auto csv = lines_of(slurp(path("r.csv")));
  const auto jsonl = lines_of(slurp(path("r.jsonl")));
  ASSERT_EQ(csv.size(), 25u);
  ASSERT_EQ(jsonl.size(), 24u);
  EXPECT_EQ(csv[0], sweep::csv_header(g));
  for (std::size_t i = 0; i < 24; ++i) {
    EXPECT_EQ(csv[i + 1].rfind(std::to_string(i) + ",", 0), 0u) << csv[i + 1];
    const auto row = nlohmann::json::parse(jsonl[i]);
    EXPECT_EQ(row["point"], i);
    EXPECT_EQ(row["axes"], nlohmann::json(g.point(static_cast<long>(i)).axes));
  }
  // The cells mean what they say: 1F1B at m = 8 without transfer time spans (m + p - 1)(t_f + t_b + t_w).
  const sweep::Table table = sweep::read_table(path("r.csv"));
  ASSERT_EQ(table.rows.size(), 24u);
  const std::size_t r = 9;  // m 8, t_comm 0, 1f1b
  EXPECT_EQ(table.cell(r, "schedule"), "1f1b");
  EXPECT_EQ(table.cell(r, "m"), "8");
  EXPECT_DOUBLE_EQ(std::stod(table.cell(r, "span")), 11 * 2.8);
  EXPECT_DOUBLE_EQ(nlohmann::json::parse(jsonl[r])["span"].get<double>(), 11 * 2.8);
  EXPECT_EQ(table.cell(2 * 8 + 0, "status"), "over-limit");  // gpipe at m 16 holds 16 > 2p = 8 activations
  // Threads finish out of order; the files do not depend on it.
  run(g, "serial.csv", 1);
  EXPECT_EQ(slurp(path("serial.csv")), slurp(path("r.csv")));
  EXPECT_EQ(slurp(path("serial.jsonl")), slurp(path("r.jsonl")));
}

TEST_F(SweepLib, WriteFilesPutsRowsInPointOrderAndTheAppenderAddsWholeLines) {
  sweep::Lines lines;
  lines[2] = {"2,c", R"({"point":2})"};
  lines[0] = {"0,a", R"({"point":0})"};
  sweep::write_files(path("w.csv"), "point,x", lines);
  EXPECT_EQ(slurp(path("w.csv")), "point,x\n0,a\n2,c\n");
  EXPECT_EQ(slurp(path("w.jsonl")), "{\"point\":0}\n{\"point\":2}\n");
  {
    sweep::Appender appender(path("w.csv"));
    appender.append({1, "ok", "1,b", R"({"point":1})"});
  }
  EXPECT_EQ(slurp(path("w.csv")), "point,x\n0,a\n2,c\n1,b\n");
  EXPECT_EQ(slurp(path("w.jsonl")), "{\"point\":0}\n{\"point\":2}\n{\"point\":1}\n");
  // Read back (as a resume does) the rows are by point again.
  const sweep::Lines back =
      sweep::read_lines(path("w.csv"), "point,x", [](long, const nlohmann::json&, const std::string&) {});
  ASSERT_EQ(back.size(), 3u);
  EXPECT_EQ(back.begin()->second.first, "0,a");
  EXPECT_EQ(back.rbegin()->second.first, "2,c");
  EXPECT_EQ(sweep::jsonl_path_for("out"), "out.jsonl");
}

TEST_F(SweepLib, MergedShardsEqualASingleRunByteForByte) {
  const sweep::Grid g = grid();
  run(g, "full.csv");
  std::vector<std::string> shards;
  for (long k = 0; k < 3; ++k) {
    const std::string out = "shard" + std::to_string(k + 1) + ".csv";
    const sweep::RunReport report = run(g, out, 2, {k, 3});
    EXPECT_EQ(report.selected, 8);
    EXPECT_EQ(report.ran, 8);
    const auto lines = lines_of(slurp(path(out)));
    ASSERT_EQ(lines.size(), 9u);
    for (std::size_t i = 1; i < lines.size(); ++i) EXPECT_EQ(std::stol(lines[i]) % 3, k) << lines[i];
    shards.push_back(path(out));
  }
  std::reverse(shards.begin(), shards.end());  // the order of the files does not matter
  const sweep::Merged merged = sweep::merge(shards, path("merged.csv"));
  EXPECT_EQ(merged.points, 24);
  EXPECT_EQ(merged.grid_points, 24);
  EXPECT_TRUE(merged.missing.empty());
  EXPECT_EQ(slurp(path("merged.csv")), slurp(path("full.csv")));
  EXPECT_EQ(slurp(path("merged.jsonl")), slurp(path("full.jsonl")));
  // Without its last shard (points 2, 5, ..., 23): refused, naming them, nothing written.
  EXPECT_NE(error_of([&] { sweep::merge({shards[1], shards[2]}, path("partial.csv")); })
                .find("merge: 8 of the grid's 24 points are missing (2, 5, 8, 11, 14, 17, 20, 23)"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(path("partial.csv")));
  // A run that lost its last rows has no gap among what is left: the grid's size in every row
  // shows the shortfall.
  for (const char* name : {"full.csv", "full.jsonl"}) {
    std::string text = slurp(path(name));
    text.erase(text.rfind('\n', text.size() - 2) + 1);
    std::ofstream(path(std::string("cut") + (std::string(name).ends_with(".csv") ? ".csv" : ".jsonl"))) << text;
  }
  EXPECT_NE(error_of([&] { sweep::merge({path("cut.csv")}, path("partial.csv")); })
                .find("1 of the grid's 24 points are missing (23)"),
            std::string::npos);
  EXPECT_FALSE(fs::exists(path("partial.csv")));
  // --allow-partial writes what there is and says what is missing.
  const sweep::Merged partial = sweep::merge({path("cut.csv")}, path("partial.csv"), true);
  EXPECT_EQ(partial.points, 23);
  EXPECT_EQ(partial.missing, std::vector<long>{23});
  EXPECT_TRUE(fs::exists(path("partial.csv")));
  // The same point with other content in two files is refused.
  std::string other = slurp(path("full.csv"));
  other.replace(other.find("\n0,") + 1, 2, "0,X");
  std::ofstream(path("other.csv")) << other;
  fs::copy_file(path("full.jsonl"), path("other.jsonl"));
  EXPECT_NE(error_of([&] {
              sweep::merge({path("full.csv"), path("other.csv")}, path("m2.csv"));
            }).find(path("other.csv") + ": point 0 differs"),
            std::string::npos);
}

// --- resume ---

TEST_F(SweepLib, AResumedSweepSkipsTheRowsItHasAndEqualsAnUninterruptedOne) {
  const sweep::Grid g = grid();
  run(g, "full.csv");
  const auto csv = lines_of(slurp(path("full.csv")));
  const auto jsonl = lines_of(slurp(path("full.jsonl")));
  // Killed after 10 CSV rows and 7 JSON lines, in the middle of writing the 11th CSV row.
  std::string torn_csv;
  for (int i = 0; i <= 10; ++i) torn_csv += csv[i] + "\n";
  torn_csv += csv[11].substr(0, 5);
  std::string torn_jsonl;
  for (int i = 0; i < 7; ++i) torn_jsonl += jsonl[i] + "\n";
  std::ofstream(path("r.csv")) << torn_csv;
  std::ofstream(path("r.jsonl")) << torn_jsonl;
  const sweep::RunReport report = run(g, "r.csv", 2, {}, true);
  EXPECT_EQ(report.kept, 7);  // a point counts when both files hold it
  EXPECT_EQ(report.ran, 17);
  EXPECT_EQ(slurp(path("r.csv")), slurp(path("full.csv")));
  EXPECT_EQ(slurp(path("r.jsonl")), slurp(path("full.jsonl")));

  // Kept rows are not run again: a marked row survives a resume.
  std::string marked_csv = slurp(path("full.csv"));
  const std::string row3 = csv[4];
  marked_csv.replace(marked_csv.find(row3), row3.size(), row3 + "marked");
  std::ofstream(path("m.csv")) << marked_csv;
  fs::copy_file(path("full.jsonl"), path("m.jsonl"));
  const sweep::RunReport again = run(g, "m.csv", 1, {}, true);
  EXPECT_EQ(again.kept, 24);
  EXPECT_EQ(again.ran, 0);
  EXPECT_EQ(sweep::status_summary(again.statuses), "nothing to run");
  EXPECT_EQ(slurp(path("m.csv")), marked_csv);

  // Without resume the file starts over.
  run(g, "m.csv", 1);
  EXPECT_EQ(slurp(path("m.csv")), slurp(path("full.csv")));
}

TEST_F(SweepLib, ResumingAnotherGridOrShardIsRefused) {
  const sweep::Grid g = grid();
  run(g, "r.csv", 1, {0, 2});
  // Another shard of the same grid: its rows are not in shard 2/2.
  EXPECT_NE(error_of([&] {
              run(g, "r.csv", 1, {1, 2}, true);
            }).find("point 0 is not in this grid shard"),
            std::string::npos);
  // Another grid: other columns.
  const sweep::Grid other = grid(R"({"base": {"problem": {"p": 2, "t_f": 1, "t_b": 1, "t_w": 1}},
                                     "axes": {"mem_b": [-0.5], "m": [4], "schedule": ["1f1b"]}})");
  EXPECT_NE(error_of([&] { run(other, "r.csv", 1, {}, true); }).find(path("r.csv") + ": line 1: the columns differ"),
            std::string::npos);
}

// --- tables and charts ---

TEST_F(SweepLib, ResultTablesReadQuotedCellsAndDropATornLastLine) {
  write("t.csv", "point,schedule,reason\n0,1f1b,\"a, \"\"quoted\"\" reason\"\n1,zb-h1,\n2,gp");
  const sweep::Table table = sweep::read_table(path("t.csv"));
  ASSERT_EQ(table.rows.size(), 2u);
  EXPECT_EQ(table.cell(0, "reason"), "a, \"quoted\" reason");
  EXPECT_EQ(table.cell(1, "schedule"), "zb-h1");
  EXPECT_EQ(table.cell(1, "nope"), "");
  EXPECT_EQ(table.column("schedule"), 1);
  write("bad.csv", "point,schedule\n0,1f1b,extra\n");
  EXPECT_EQ(error_of([&] { sweep::read_table(path("bad.csv")); }),
            path("bad.csv") + ": row 2 has 3 cells, the header 2");
}

sweep::Table tiny_results() {
  sweep::Table table;
  table.columns = {"point",      "model",         "p",      "m",           "schedule",
                   "mem_limit",  "mem_limit_abs", "status", "bubble_rate", "samples_per_s_per_gpu",
                   "peak_memory"};
  table.rows = {
      {"0", "", "4", "4", "gpipe", "8", "8", "ok", "0.5", "", "4;4;4;4"},
      {"1", "", "4", "4", "1f1b", "8", "8", "ok", "0.25", "", "4;3;2;1"},
      {"2", "", "4", "8", "gpipe", "8", "8", "over-limit", "0.3", "", "8;8;8;8"},
      {"3", "", "4", "8", "1f1b", "8", "8", "ok", "0.125", "", "4;3;2;1"},
  };
  return table;
}

TEST_F(SweepLib, PlotMakesOneSeriesPerScheduleAndLeavesOutRowsNotOk) {
  const sweep::Plot plot = sweep::plot_results(tiny_results(), "r.csv", {});
  EXPECT_EQ(plot.rows, 3u);
  ASSERT_EQ(plot.charts.size(), 2u);  // bubble and memory; the limit is not swept: no throughput chart
  const sweep::Chart& bubble = plot.charts[0];
  EXPECT_EQ(bubble.title, "Bubble rate vs microbatches");
  EXPECT_EQ(bubble.subtitle, "r.csv: 3 rows; 1 rows not ok left out");
  ASSERT_EQ(bubble.series.size(), 2u);
  EXPECT_EQ(bubble.series[0].label, "gpipe");
  EXPECT_EQ(bubble.series[0].points, (std::vector<std::pair<double, double>>{{4, 0.5}}));
  EXPECT_EQ(bubble.series[1].label, "1f1b");
  EXPECT_EQ(bubble.series[1].points, (std::vector<std::pair<double, double>>{{4, 0.25}, {8, 0.125}}));
  EXPECT_EQ(bubble.series[1].color, 1);
  const sweep::Chart& memory = plot.charts[1];
  EXPECT_TRUE(memory.bars);
  EXPECT_EQ(memory.subtitle, "at m=8");  // the configuration of the last ok row
  ASSERT_EQ(memory.series.size(), 1u);
  EXPECT_EQ(memory.series[0].label, "1f1b");
  EXPECT_EQ(memory.series[0].points, (std::vector<std::pair<double, double>>{{0, 4}, {1, 3}, {2, 2}, {3, 1}}));
  EXPECT_EQ(memory.y_reference, 8);

  const std::string svg = sweep::render_charts(plot.charts);
  EXPECT_EQ(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
  for (const char* text : {">Bubble rate vs microbatches</text>", ">r.csv: 3 rows; 1 rows not ok left out</text>",
                           ">microbatches m (log scale)</text>", "<title>gpipe: (4, 50%)</title>",
                           "<title>1f1b: (8, 12.5%)</title>", ">Peak activation memory per device</text>",
                           "<title>1f1b: 3</title>", ">memory limit 8</text>", ">gpipe</text>", ">1f1b</text>"}) {
    EXPECT_NE(svg.find(text), std::string::npos) << text;
  }
  EXPECT_EQ(svg.find("(8, 30%)"), std::string::npos);  // the over-limit row is not drawn
  EXPECT_EQ(svg, sweep::render_charts(plot.charts));   // deterministic
}

TEST_F(SweepLib, PlotFiltersRowsAndRefusesWhatItCannotDraw) {
  sweep::PlotOptions only_gpipe;
  only_gpipe.where = {"schedule=gpipe"};
  only_gpipe.kind = sweep::ChartKind::bubble;
  const sweep::Plot plot = sweep::plot_results(tiny_results(), "r.csv", only_gpipe);
  EXPECT_EQ(plot.rows, 1u);
  ASSERT_EQ(plot.charts.size(), 1u);
  EXPECT_EQ(plot.charts[0].series.size(), 1u);
  EXPECT_EQ(sweep::parse_chart_kind("memory"), sweep::ChartKind::memory);
  EXPECT_EQ(error_of([] { sweep::parse_chart_kind("pie"); }),
            "--chart: unknown chart 'pie' (expected bubble, throughput, memory or all)");
  sweep::PlotOptions bad_where;
  bad_where.where = {"colour=red"};
  EXPECT_EQ(error_of([&] { sweep::plot_results(tiny_results(), "r.csv", bad_where); }),
            "--where: 'colour=red': expected COLUMN=VALUE with a column of r.csv");
  sweep::PlotOptions none;
  none.where = {"m=16"};
  EXPECT_EQ(error_of([&] { sweep::plot_results(tiny_results(), "r.csv", none); }),
            "r.csv: no rows with status ok to plot");
  sweep::Table not_results = tiny_results();
  not_results.columns[8] = "bubble";
  EXPECT_EQ(error_of([&] { sweep::plot_results(not_results, "r.csv", {}); }),
            "r.csv: no column 'bubble_rate': not a results file of zbsim sweep");
}

}  // namespace
