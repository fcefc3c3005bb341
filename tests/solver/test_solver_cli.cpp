// zbsim solve / frontier / compare with the solver's schedules, run as a user would.
#include <gtest/gtest.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/testing/cli_test.h"

namespace {

namespace fs = std::filesystem;

using zb::testing::CliRun;

// The memory units: limit 8 = 1p, 16 = 2p.
const std::string kUnbalanced = " --p 4 --m 8 --tf 5 --tb 7 --tw 3 --tcomm 1 --mem-f 2 --mem-b -1 --mem-w -1";

class SolverCli : public zb::testing::CliTest {
 protected:
  CliRun zbsim(const std::string& args) { return run(ZBSIM_PATH, args); }
};

TEST_F(SolverCli, SolveProvesAndWritesTheSchedule) {
  const fs::path out = dir_ / "zb-ilp.txt";
  const CliRun run = zbsim("solve" + kUnbalanced + " --mem-limit 10 --time-limit 40 --out " + out.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("zb-ilp: optimal  span 145 ms  bound 145  gap 0.00%"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("zb-auto 148"), std::string::npos) << run.out;
  // zb-auto (148) is above the lower bound, so the proof of 145 is the order search's.
  EXPECT_NE(run.out.find("certificate: proven optimal by exhaustive branch and bound"), std::string::npos) << run.out;
  ASSERT_TRUE(fs::exists(out));
  std::ifstream in(out);
  std::string first, second;
  std::getline(in, first);
  std::getline(in, second);
  EXPECT_EQ(first.rfind("# zb-ilp optimal (proof: search) span 145", 0), 0u) << first;
  EXPECT_EQ(second.rfind("d0: F0 ", 0), 0u) << second;
  // The written schedule runs through compare as a schedule file would elsewhere: here, simply
  // check the JSON form of solve agrees.
  const CliRun json = zbsim("solve" + kUnbalanced + " --mem-limit 10 --time-limit 40 --format json");
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const auto object = nlohmann::json::parse(json.out);
  const auto& row = object["results"][0];
  EXPECT_EQ(row["schedule"], "zb-ilp");
  EXPECT_EQ(row["status"], "optimal");
  EXPECT_DOUBLE_EQ(row["span"].get<double>(), 145);
  EXPECT_DOUBLE_EQ(row["best_bound"].get<double>(), 145);
  EXPECT_DOUBLE_EQ(row["heuristic_span"].get<double>(), 148);
  EXPECT_LE(row["peak_memory"][0].get<double>(), 10);
  EXPECT_EQ(row["reason"].get<std::string>().rfind("proven optimal by exhaustive branch and bound", 0), 0u)
      << row["reason"];
}

// frontier --offload (issue 30): fixed schedules with 0..v chunks offloaded and PipeOffload's
// po-h/po-f on the frontier's axes; at k <= 1 po-h holds under a third of interleaved 1F1B's peak,
// each extra offloaded chunk holds no more, and the SVG draws them as squares.
TEST_F(SolverCli, FrontierWithOffloadGoesBelowVMin) {
  const auto svg = dir_ / "frontier.svg";
  const CliRun run = zbsim("frontier --p 8 --m 32 --tf 1 --tb 1 --tw 1 --t-offload 1 --to 2 --offload --format json "
                           "--svg " + svg.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  std::map<std::string, std::vector<double>> peaks;
  for (const auto& series : json["offload"]) {
    for (const auto& point : series["points"]) {
      ASSERT_EQ(point["status"], "ok") << series["schedule"] << point.dump();
      peaks[series["schedule"]].push_back(point["peak_times_p"].get<double>());
    }
  }
  ASSERT_EQ(peaks["1f1b-i"].size(), 3u);  // 0, 1 and 2 of its 2 chunks offloaded
  for (const auto& [name, values] : peaks) {
    for (std::size_t k = 1; k < values.size(); ++k) EXPECT_LE(values[k], values[k - 1] + 1e-12) << name;
  }
  EXPECT_LE(peaks["po-h"][0], 0.3 * peaks["1f1b-i"][0]);
  EXPECT_LT(peaks["po-f"][0], peaks["v-min"][0]);  // below V-Min
  std::ifstream in(svg);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("po-f"), std::string::npos);
  EXPECT_NE(text.find("width=\"7\" height=\"7\""), std::string::npos);  // square markers
  // Without a copy time there is nothing to place: exit 2, no SVG.
  std::filesystem::remove(svg);
  const CliRun bare = zbsim("frontier --p 8 --m 32 --tf 1 --tb 1 --tw 1 --offload --svg " + svg.string());
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("--offload"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(svg));
}

// Unit costs at 2p: zb-auto meets the lower bound, which certifies over all schedules without CBC.
TEST_F(SolverCli, SolveSaysWhenTheLowerBoundIsTheProof) {
  const CliRun run = zbsim("solve --p 4 --m 8 --tf 1 --tb 1 --tw 1 --mem-f 2 --mem-b -1 --mem-w -1 --mem-limit 16");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("zb-ilp: optimal"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("certificate: proven optimal by the lower bound (over all schedules)"), std::string::npos)
      << run.out;
}

TEST_F(SolverCli, InfeasibleLimitIsExitTwoWithoutOutput) {
  const fs::path out = dir_ / "never.txt";
  const CliRun run = zbsim("solve" + kUnbalanced + " --mem-limit 1.5 --out " + out.string());
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find("--mem-limit: memory limit 1.5 is infeasible"), std::string::npos) << run.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(zbsim("solve" + kUnbalanced + " --time-limit 0").exit_code, 2);
  EXPECT_EQ(zbsim("solve --p 4 --m 8 --chunks 2 --placement bidirectional --tf 1 --tb 1 --tw 1").exit_code, 2);
}

// Several chunks per device: zb-auto with the multi-chunk bound, a certified gap.
TEST_F(SolverCli, SolveGivesInterleavedProblemsABound) {
  const CliRun run = zbsim("solve --p 4 --m 8 --chunks 2 --tf 1 --tb 1 --tw 1 --mem-f 2 --mem-b -1 --mem-w -1");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("bound "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("2 chunks per device: zb-auto at the interleaved placement"), std::string::npos) << run.out;
  // The SVG's zb-auto row is zb-auto at the same placement (it called the one-chunk greedy: exit 2).
  const fs::path svg = dir_ / "interleaved.svg";
  const CliRun drawn = zbsim("solve --p 4 --m 8 --chunks 2 --tf 1 --tb 1 --tw 1 --mem-f 2 --mem-b -1 --mem-w -1 --svg " +
                             svg.string());
  ASSERT_EQ(drawn.exit_code, 0) << drawn.err;
  EXPECT_NE(zb::testing::slurp(svg).find("zb-auto"), std::string::npos);
}

TEST_F(SolverCli, CompareAcceptsTheSolverSchedules) {
  const CliRun run = zbsim("compare" + kUnbalanced + " --mem-limit 10 --schedules zb-h1,zb-auto,zb-1p,zb-ilp --format json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto rows = nlohmann::json::parse(run.out)["results"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_DOUBLE_EQ(rows[0]["span"].get<double>(), 159);  // zb-h1
  EXPECT_DOUBLE_EQ(rows[1]["span"].get<double>(), 148);  // zb-auto
  EXPECT_DOUBLE_EQ(rows[2]["span"].get<double>(), 159);  // zb-1p
  EXPECT_LE(rows[3]["span"].get<double>(), 148);         // zb-ilp (10 s limit)
  for (const auto& row : rows) EXPECT_EQ(row["status"], "ok") << row.dump();
  // An infeasible limit is a row status in compare.
  const CliRun tight = zbsim("compare" + kUnbalanced + " --mem-limit 1 --schedules zb-auto,zb-ilp --format json");
  ASSERT_EQ(tight.exit_code, 0) << tight.err;
  for (const auto& row : nlohmann::json::parse(tight.out)["results"]) EXPECT_EQ(row["status"], "infeasible");
}

TEST_F(SolverCli, FrontierCsvAndSvg) {
  const fs::path svg = dir_ / "frontier.svg";
  const CliRun run = zbsim("frontier --p 4 --m 8 --tf 1 --tb 1 --tw 1 --format csv --svg " + svg.string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  std::istringstream lines(run.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "placement,chunks,limit_times_p,limit,auto_status,auto_span,auto_bubble_rate,auto_peak_memory");
  std::vector<std::string> rows;
  while (std::getline(lines, line)) rows.push_back(line);
  // One chunk per device beside the V, 17 limits each, at equal work and M_B.
  ASSERT_EQ(rows.size(), 34u);
  EXPECT_EQ(rows[0], "linear,1,1,4,ok,27,0.1111111111111111,4");  // default units: M_B = 1, 1p = 4: ZB-H1
  EXPECT_EQ(rows[17], "vshape,2,1,4,ok,24,0,4");                   // ZB-V: zero bubble at 1F1B's memory
  ASSERT_TRUE(fs::exists(svg));
  const std::string plot = zb::testing::slurp(svg);
  EXPECT_NE(plot.find("zb-auto, 1 chunk per device"), std::string::npos);
  EXPECT_NE(plot.find("zb-auto, V, 2 chunks"), std::string::npos);
  // One placement when asked; a placement the per-stage costs cannot take is refused.
  const CliRun linear = zbsim("frontier --p 4 --m 8 --tf 1 --tb 1 --tw 1 --format csv --placements linear");
  ASSERT_EQ(linear.exit_code, 0) << linear.err;
  EXPECT_EQ(std::count(linear.out.begin(), linear.out.end(), '\n'), 18);
  const CliRun per_stage = zbsim("frontier --p 2 --m 4 --tf 1,1 --tb 1 --tw 1 --placements vshape,linear --chunks 1");
  EXPECT_EQ(per_stage.exit_code, 0) << per_stage.err;  // per-device lists move between chunk counts
  const CliRun bad = zbsim("frontier --p 4 --m 8 --tf 1 --tb 1 --tw 1 --placements diagonal");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("diagonal"), std::string::npos) << bad.err;
  EXPECT_EQ(zbsim("frontier --p 4 --m 8 --tf 1 --tb 1 --tw 1 --step 0").exit_code, 2);
}

}  // namespace
