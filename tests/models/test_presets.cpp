// Every shipped preset loads, and names, paths and bad values resolve as documented.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "models/cost_model.h"
#include "sim/schedule/error.h"
#include "models/presets.h"

namespace zb::models {
namespace {

TEST(Presets, EveryTransformerAndHardwarePresetLoads) {
  const auto models = preset_names("transformers");
  const auto hardware = preset_names("hardware");
  EXPECT_GE(models.size(), 9u);
  EXPECT_EQ(hardware, (std::vector<std::string>{"a100-80gb", "a100-80gb-pcie", "h100-sxm", "h200"}));
  for (const auto& model : models) {
    for (const auto& gpu : hardware) {
      const nlohmann::json scenario = {{"model", model}, {"hardware", gpu}};
      const ModelSetup setup = model_setup_from_json(scenario, model + "/" + gpu, ".");
      EXPECT_GT(setup.model.total_params(), 1e9) << model;
      EXPECT_GT(setup.hardware.peak_tflops_bf16, 300) << gpu;
      EXPECT_GT(setup.interconnect.inter_node.bandwidth_GBps, 0) << gpu;
    }
  }
}

TEST(Presets, ClusterPresetsOfTheEngineAreReadForLinks) {
  const nlohmann::json scenario = {{"model", "gpt-1.5b"}, {"hardware", "a100-80gb"}, {"cluster", "4x8-ib200"}};
  const ModelSetup setup = model_setup_from_json(scenario, "s", ".");
  EXPECT_EQ(setup.interconnect.gpus_per_node, 8);
  EXPECT_EQ(setup.interconnect.nodes, 4);
  EXPECT_EQ(setup.cluster_label, "4x8-ib200");
  EXPECT_FALSE(setup.cluster_path.empty());
  EXPECT_DOUBLE_EQ(setup.interconnect.link_between(7, 8).bandwidth_GBps, 25);
  EXPECT_DOUBLE_EQ(setup.interconnect.link_between(6, 7).bandwidth_GBps, 450);
}

TEST(Presets, UnknownNamesListTheKnownOnes) {
  try {
    model_setup_from_json({{"model", "gpt-9b"}, {"hardware", "a100-80gb"}}, "s.json", ".");
    FAIL();
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("s.json: field 'model' is 'gpt-9b': no such preset"), std::string::npos) << message;
    EXPECT_NE(message.find("llama3-8b"), std::string::npos) << message;
  }
  EXPECT_THROW(model_setup_from_json({{"model", "gpt-1.5b"}}, "s.json", "."), InputError);
  EXPECT_THROW(model_setup_from_json({{"model", "no/such.json"}, {"hardware", "h200"}}, "s.json", "."), InputError);
  EXPECT_THROW(model_setup_from_json({{"model", "gpt-1.5b"}, {"hardware", "h200"}, {"mfu", 1.5}}, "s.json", "."),
               InputError);
}

// The paper's 1.5B setting (b = 6, 8 A100s, its split): t_f of a 3-layer stage at 50% MFU.
TEST(Presets, PaperGptOnA100) {
  const nlohmann::json scenario = {{"model", "gpt-1.5b"}, {"hardware", "a100-80gb"}, {"microbatch_size", 6},
                                   {"split", "paper"}, {"mfu", 0.5}};
  const ModelSetup setup = model_setup_from_json(scenario, "s", ".");
  ProblemSpec spec;
  spec.devices = 8;
  spec.microbatches = 24;
  apply_model(setup, spec, {}, "s");
  ASSERT_EQ(spec.t_f.size(), 8u);
  EXPECT_DOUBLE_EQ(spec.t_f[1], 3 * 840739848192.0 / (312e12 * 0.5) * 1e3);  // about 16.2 ms
  EXPECT_NEAR(spec.t_f[1], 16.17, 0.01);
}

}  // namespace
}  // namespace zb::models
