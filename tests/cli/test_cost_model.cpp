// --cost-model on the commands that cost a model-driven scenario: the roofline ignores a hardware
// preset's calibration; a problem without a model is refused.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/testing/cli_test.h"

namespace {

using zb::testing::CliRun;

class CostModelFlag : public zb::testing::CliTest {
 protected:
  CliRun zbsim(const std::string& args) { return run(ZBSIM_PATH, args); }

  // A scenario of a small GPT on a GPU whose preset carries a calibration.
  std::string scenario() {
    const nlohmann::json gpu = nlohmann::json::parse(R"({"peak_tflops_bf16": 312, "memory_bandwidth_GBps": 2039,
        "sm_count": 108, "memory_GB": 80, "nvlink": {"bandwidth_GBps": 300, "latency_us": 3},
        "nic": {"bandwidth_GBps": 25, "latency_us": 10}, "gpus_per_node": 8,
        "calibration": {"gemm_sustained_fraction": 0.5, "memory_sustained_fraction": 0.6, "kernel_overhead_us": 10,
                        "collective_efficiency": 0.7, "attention_sustained_fraction": 0.4, "misaligned_gemm_fraction": 0.5,
                        "fitted_on": "a test",
                        "cross_validation": "none"}})");
    const nlohmann::json object = {{"model", "gpt-1.5b"}, {"hardware", gpu}, {"microbatch_size", 2},
                                   {"problem", {{"p", 4}, {"m", 8}}}, {"schedules", {"1f1b"}}};
    const auto path = dir_ / "scenario.json";
    std::ofstream(path) << object.dump();
    return path.string();
  }
  double step_time(const std::string& extra) {
    const CliRun run = zbsim("compare --scenario " + scenario() + " --format json" + extra);
    EXPECT_EQ(run.exit_code, 0) << run.err;
    return nlohmann::json::parse(run.out)["results"][0]["step_time"].get<double>();
  }
};

TEST_F(CostModelFlag, RooflineIgnoresTheCalibration) {
  const double calibrated = step_time("");
  EXPECT_DOUBLE_EQ(step_time(" --cost-model calibrated"), calibrated);
  const double roofline = step_time(" --cost-model roofline");
  EXPECT_GT(calibrated, 1.3 * roofline);  // GEMMs at 0.5 of the peak instead of 0.8, and more
}

TEST_F(CostModelFlag, BadValuesAndProblemsWithoutAModelExitTwo) {
  const CliRun bad = zbsim("compare --scenario " + scenario() + " --cost-model fitted");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--cost-model: 'fitted' (expected calibrated or roofline)"), std::string::npos) << bad.err;
  const CliRun bare = zbsim("compare --p 4 --m 8 --cost-model roofline");
  EXPECT_EQ(bare.exit_code, 2);
  EXPECT_NE(bare.err.find("--cost-model: the problem has no model to cost"), std::string::npos) << bare.err;
}

}  // namespace
