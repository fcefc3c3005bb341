// zbsim validate end to end: the development set's every row reported, the forms, bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "tests/testing/cli_test.h"

namespace {

using zb::testing::CliRun;
using zb::testing::slurp;

class Validate : public zb::testing::CliTest {
 protected:
  CliRun zbsim(const std::string& args) { return run(ZBSIM_PATH, "validate " + args); }
  const std::string dev = std::string(ZB_SOURCE_DIR) + "/tests/data/measured/dev.csv";
  const std::string known = std::string(ZB_SOURCE_DIR) + "/tests/app/validate/data/known.csv";
};

TEST_F(Validate, EveryRowOfTheDevelopmentSetIsPredictedOrGivesItsReasons) {
  const CliRun run = zbsim("--measured " + dev + " --format json --jobs 2");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["rows"].size(), 272u);
  int predicted = 0;
  for (const auto& row : json["rows"]) {
    if (row["status"] == "uncovered") {
      EXPECT_FALSE(row["uncovered"].empty()) << row["id"];
    } else {
      ++predicted;
      EXPECT_GT(row["predicted_tokens_per_s_per_gpu"].get<double>(), 0) << row["id"];
      // MFU counts model FLOPs against the 16-bit peak; FP8 runs on Hopper have twice that.
      const bool fp8 = row["precision"].get<std::string>().starts_with("fp8");
      EXPECT_LT(row["mfu"].get<double>(), fp8 ? 2 : 1) << row["id"];
    }
  }
  EXPECT_EQ(predicted, json["rows_predicted"]);
  EXPECT_GE(predicted, 150);  // 161 at the first version; fewer means a row lost its mapping
}

TEST_F(Validate, TableCsvAndScatter) {
  const std::string svg = (dir_ / "scatter.svg").string();
  const CliRun table = zbsim("--measured " + known + " --svg " + svg);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("rows 8, predicted 5 (62.5%), counted 4"), std::string::npos) << table.out;
  EXPECT_NE(slurp(svg).find("Predicted vs measured tokens/s per GPU (5 rows)"), std::string::npos);
  const CliRun csv = zbsim("--measured " + known + " --format csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("id,line,source,model,", 0), 0u);
  EXPECT_NE(csv.out.find("\nG4,"), std::string::npos);
}

TEST_F(Validate, BadInputExitsTwoAndWritesNothing) {
  const std::string svg = (dir_ / "scatter.svg").string();
  struct Case {
    std::string args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"", "--measured: missing"},
      {"--measured " + (dir_ / "none.csv").string(), "none.csv"},
      {"--measured " + known + " --format yaml", "--format"},
      {"--measured " + known + " --engine gpu", "gpu"},
      {"--measured " + known + " --jobs 0", "--jobs: 0"},
  };
  for (const Case& c : cases) {
    const CliRun run = zbsim(c.args + " --svg " + svg);
    EXPECT_EQ(run.exit_code, 2) << c.args << "\n" << run.err;
    EXPECT_NE(run.err.find(c.message), std::string::npos) << c.args << "\n" << run.err;
    EXPECT_FALSE(std::filesystem::exists(svg)) << c.args;
  }
  const CliRun unwritable = zbsim("--measured " + known + " --svg " + (dir_ / "no" / "x.svg").string());
  EXPECT_EQ(unwritable.exit_code, 2);
  EXPECT_NE(unwritable.err.find("x.svg"), std::string::npos) << unwritable.err;
  EXPECT_TRUE(unwritable.out.empty()) << unwritable.out;
  std::ofstream(dir_ / "bad.csv") << "id,source\nA,B\n";
  const CliRun bad = zbsim("--measured " + (dir_ / "bad.csv").string());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bad.csv:1: column 'model' missing"), std::string::npos) << bad.err;
}

}  // namespace
