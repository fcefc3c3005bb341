// zbsim recommend end to end (exit codes, the plan folder simulate accepts, JSON), and the
// shipped model scenarios: each fits device memory for every schedule it lists (issue 16 item 4).
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/testing/cli_test.h"

namespace {

using zb::testing::CliRun;
using zb::testing::slurp;

class Recommend : public zb::testing::CliTest {
 protected:
  CliRun zbsim(const std::string& args) { return run(ZBSIM_PATH, args); }
  const std::string data = std::string(ZB_SOURCE_DIR) + "/tests/app/plan/data/";
  std::string tiny() const {
    return "recommend --model " + data + "tiny-llama.json --hardware " + data + "small-gpu.json --cluster " + data +
           "16x4-ib200.json --gpus 8 --global-batch 16";
  }
};

TEST_F(Recommend, WritesAPlanThatSimulateRuns) {
  const std::string out = (dir_ / "plan").string();
  const CliRun run = zbsim(tiny() + " --out " + out + " --svg " + (dir_ / "pareto.svg").string());
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find(" 1  pp"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("searched "), std::string::npos);
  for (const char* file : {"plan.json", "torchtitan.txt", "megatron.txt"}) {
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(out) / file)) << file;
  }
  EXPECT_NE(slurp(std::filesystem::path(out) / "megatron.txt").find("--pipeline-model-parallel-size"), std::string::npos);
  EXPECT_NE(slurp(dir_ / "pareto.svg").find("<svg"), std::string::npos);
  const CliRun simulate = zbsim("simulate --scenario " + out + "/plan.json --format json");
  ASSERT_EQ(simulate.exit_code, 0) << simulate.err;
  const auto result = nlohmann::json::parse(simulate.out)["results"][0];
  EXPECT_EQ(result["status"], "ok");
}

TEST_F(Recommend, JsonIsByteIdenticalAcrossRunsAndJobs) {
  const CliRun a = zbsim(tiny() + " --format json --no-simgrid --jobs 2");
  const CliRun b = zbsim(tiny() + " --format json --no-simgrid --jobs 1");
  ASSERT_EQ(a.exit_code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  const auto json = nlohmann::json::parse(a.out);
  EXPECT_EQ(json["top"].size(), 10u);
  EXPECT_GT(json["search"]["pruned_bound"].get<long>(), 0);
}

TEST_F(Recommend, BadInputExitsTwo) {
  for (const std::string& args :
       {std::string("recommend --model nope --cluster 8x8-ib400 --hardware h100-sxm --global-batch 8"),
        std::string("recommend --model llama3-8b --cluster nope --hardware h100-sxm --global-batch 8"),
        std::string("recommend --model llama3-8b --cluster 8x8-ib400 --hardware h100-sxm --global-batch 0"),
        tiny() + " --format csv"}) {
    const CliRun run = zbsim(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.out << run.err;
    EXPECT_FALSE(run.err.empty());
  }
}

TEST_F(Recommend, EveryShippedModelScenarioFitsForItsSchedules) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(ZB_SOURCE_DIR) + "/scenarios/models")) {
    if (entry.path().extension() != ".json") continue;
    const CliRun run = zbsim("compare --scenario " + entry.path().string() + " --format json");
    ASSERT_EQ(run.exit_code, 0) << entry.path() << ": " << run.err;
    for (const auto& row : nlohmann::json::parse(run.out)["results"]) {
      EXPECT_EQ(row["status"], "ok") << entry.path().filename() << " " << row["schedule"] << ": " << row.value("reason", "");
    }
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

}  // namespace
