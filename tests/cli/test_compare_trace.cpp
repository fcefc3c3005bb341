// zbsim compare-trace on the real torch.profiler run of tests/data/kineto: measured against a
// simulation of the same schedule with the costs the run measured; formats, units and bad input.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/testing/cli_test.h"

namespace {

namespace fs = std::filesystem;
using zb::testing::CliRun;

const std::string kData = std::string(ZB_SOURCE_DIR) + "/tests/data/kineto/";

std::string ranks(const std::string& stem, std::initializer_list<int> which) {
  std::string files;
  for (int r : which) files += " " + kData + stem + ".rank" + std::to_string(r) + ".json";
  return files;
}

const std::string kRun = ranks("zb-h1_4rank_4mb", {3, 1, 0, 2});  // any order

std::string fmt_number(double value) { return fmt::format("{:.6f}", value); }

class CompareTrace : public zb::testing::CliTest {
 protected:
  CliRun zbsim(const std::string& args) { return run(ZBSIM_PATH, args); }

  nlohmann::json json_of(const std::string& args) {
    const CliRun result = zbsim(args + " --format json");
    EXPECT_EQ(result.exit_code, 0) << result.err;
    return result.exit_code == 0 ? nlohmann::json::parse(result.out) : nlohmann::json();
  }

  const nlohmann::json& row(const nlohmann::json& out, const std::string& metric, int device) {
    for (const auto& item : out["rows"]) {
      if (item["metric"] == metric && item["device"] == (device >= 0 ? nlohmann::json(device) : nlohmann::json(nullptr))) {
        return item;
      }
    }
    ADD_FAILURE() << "no row " << metric << " " << device;
    return out;
  }

  // The run's measured costs, simulated on its own schedule: the trace file.
  fs::path simulate(const std::string& extra = "") {
    const nlohmann::json self = json_of("compare-trace --measured" + kRun + " --simulated" + kRun);
    const std::string costs = self["measured_costs"].get<std::string>();
    const fs::path trace = dir_ / "sim.json";
    const CliRun sim = zbsim("simulate --schedule-file " + kData + "zb-h1_4rank_4mb.csv " + costs + extra +
                             " --trace " + trace.string());
    EXPECT_EQ(sim.exit_code, 0) << sim.err;
    return trace;
  }
};

TEST_F(CompareTrace, ARunAgainstItselfDiffersByNothing) {
  const nlohmann::json out = json_of("compare-trace --measured" + kRun + " --simulated" + kRun);
  EXPECT_EQ(out["devices"], 4);
  EXPECT_EQ(out["time_unit"], "ms");
  ASSERT_EQ(out["rows"].size(), 4u * 3 + 3);
  for (const auto& item : out["rows"]) {
    EXPECT_EQ(item["difference"], 0.0) << item.dump();
    EXPECT_EQ(item["measured"], item["simulated"]);
  }
  EXPECT_GT(row(out, "span", -1)["measured"].get<double>(), 0);
  // Four per-stage medians for each of F, B and W.
  const std::string costs = out["measured_costs"].get<std::string>();
  EXPECT_EQ(costs.rfind("--tf ", 0), 0u) << costs;
  EXPECT_NE(costs.find(" --tb "), std::string::npos);
  EXPECT_NE(costs.find(" --tw "), std::string::npos);
  EXPECT_EQ(std::count(costs.begin(), costs.end(), ','), 9);
}

TEST_F(CompareTrace, AFullBackwardRunGivesItsBackwardAsTb) {
  const std::string run = ranks("1f1b_2rank_4mb", {0, 1});
  const std::string costs = json_of("compare-trace --measured" + run + " --simulated" + run)["measured_costs"];
  EXPECT_EQ(costs.rfind("--tf ", 0), 0u) << costs;
  EXPECT_EQ(costs.substr(costs.size() - 7), " --tw 0") << costs;
  const fs::path sim = dir_ / "sim.json";
  ASSERT_EQ(zbsim("simulate --schedule-file " + kData + "1f1b_2rank_4mb.csv " + costs + " --trace " + sim.string()).exit_code, 0);
  const nlohmann::json out = json_of("compare-trace --measured" + run + " --simulated " + sim.string());
  // The simulated device 1 (the last stage) never waits: its span is its work, F + B of 4 microbatches.
  EXPECT_NEAR(row(out, "bubble_rate", 1)["simulated"].get<double>(), 0.0, 1e-12);
}

TEST_F(CompareTrace, MeasuredAgainstItsSimulation) {
  const fs::path sim = simulate();
  const nlohmann::json out = json_of("compare-trace --measured" + kRun + " --simulated " + sim.string());
  const nlohmann::json self = json_of("compare-trace --measured" + kRun + " --simulated" + kRun);
  // The measured side is the run whatever it is compared with; the simulated side is the
  // evaluator's trace of the same schedule at the measured costs.
  for (int d = 0; d < 4; ++d) {
    const auto& span = row(out, "device_span", d);
    EXPECT_EQ(span["measured"], row(self, "device_span", d)["measured"]);
    const double measured = span["measured"].get<double>(), simulated = span["simulated"].get<double>();
    EXPECT_NEAR(span["difference"].get<double>(), measured - simulated, 1e-9);
    EXPECT_NEAR(span["relative"].get<double>(), (measured - simulated) / simulated, 1e-12);
  }
  const CliRun simulated_json = zbsim("simulate --schedule-file " + kData + "zb-h1_4rank_4mb.csv " +
                                      self["measured_costs"].get<std::string>() + " --format json");
  const auto result = nlohmann::json::parse(simulated_json.out)["results"][0];
  EXPECT_DOUBLE_EQ(row(out, "span", -1)["simulated"].get<double>(), result["span"].get<double>());
  EXPECT_DOUBLE_EQ(row(out, "makespan", -1)["simulated"].get<double>(), result["makespan"].get<double>());
  EXPECT_DOUBLE_EQ(row(out, "bubble_rate", -1)["simulated"].get<double>(), result["bubble_rate"].get<double>());

  const CliRun table = zbsim("compare-trace --measured" + kRun + " --simulated " + sim.string());
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("(torch.profiler)"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("d3 "), std::string::npos);
  EXPECT_NE(table.out.find("bubble rate"), std::string::npos);
  const CliRun csv = zbsim("compare-trace --measured" + kRun + " --simulated " + sim.string() + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\n')), "metric,device,measured,simulated,difference,relative");
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 1 + 15);
  // Same input, byte-identical output.
  EXPECT_EQ(zbsim("compare-trace --measured" + kRun + " --simulated " + sim.string()).out, table.out);
}

TEST_F(CompareTrace, ASimulationInMicrosecondsIsComparedInMilliseconds) {
  const nlohmann::json self = json_of("compare-trace --measured" + kRun + " --simulated" + kRun);
  const fs::path ms = simulate();
  // The same costs in us: each list value times 1000.
  std::string costs = self["measured_costs"].get<std::string>(), scaled;
  for (std::size_t at = 0; at < costs.size();) {
    const std::size_t end = costs.find_first_of(", ", at);
    const std::string token = costs.substr(at, end == std::string::npos ? std::string::npos : end - at);
    scaled += token.rfind("--", 0) == 0 ? token : fmt_number(std::stod(token) * 1000);
    if (end == std::string::npos) break;
    scaled += costs[end];
    at = end + 1;
  }
  const fs::path us = dir_ / "sim-us.json";
  ASSERT_EQ(zbsim("simulate --schedule-file " + kData + "zb-h1_4rank_4mb.csv " + scaled + " --time-unit us --trace " +
                  us.string()).exit_code, 0);
  const nlohmann::json in_ms = json_of("compare-trace --measured" + kRun + " --simulated " + ms.string());
  const nlohmann::json in_us = json_of("compare-trace --measured" + kRun + " --simulated " + us.string());
  for (std::size_t i = 0; i < in_ms["rows"].size(); ++i) {
    EXPECT_NEAR(in_us["rows"][i]["simulated"].get<double>(), in_ms["rows"][i]["simulated"].get<double>(), 1e-6);
  }
}

TEST_F(CompareTrace, BadInputIsExitTwoNamingTheFile) {
  const fs::path sim = simulate();
  const CliRun missing = zbsim("compare-trace --measured" + kRun);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("simulated"), std::string::npos) << missing.err;

  const CliRun two_ranks = zbsim("compare-trace --measured" + ranks("1f1b_2rank_4mb", {0, 1}) + " --simulated " + sim.string());
  EXPECT_EQ(two_ranks.exit_code, 2);
  EXPECT_NE(two_ranks.err.find("has 2 devices"), std::string::npos) << two_ranks.err;

  const CliRun gap = zbsim("compare-trace --measured" + ranks("zb-h1_4rank_4mb", {0, 1, 3}) + " --simulated " + sim.string());
  EXPECT_EQ(gap.exit_code, 2);
  EXPECT_NE(gap.err.find("device 2 has no compute span"), std::string::npos) << gap.err;

  const CliRun mixed = zbsim("compare-trace --measured " + sim.string() + ranks("zb-h1_4rank_4mb", {0}) + " --simulated " +
                             sim.string());
  EXPECT_EQ(mixed.exit_code, 2);
  EXPECT_NE(mixed.err.find("give it alone"), std::string::npos) << mixed.err;

  const fs::path other = dir_ / "other.json";
  std::ofstream(other) << R"({"problem": {"p": 4}})";
  const CliRun not_trace = zbsim("compare-trace --measured " + other.string() + " --simulated " + sim.string());
  EXPECT_EQ(not_trace.exit_code, 2);
  EXPECT_NE(not_trace.err.find(other.string() + ": not a trace"), std::string::npos) << not_trace.err;

  const CliRun twice = zbsim("compare-trace --measured" + ranks("zb-h1_4rank_4mb", {0, 0, 1, 2, 3}) + " --simulated " +
                             sim.string());
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("both are rank 0"), std::string::npos) << twice.err;
}

}  // namespace
