// Model-driven costs in the explorer (only when zbview is built with models/).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/gui/gui_test_support.h"
#include "sim/schedule/error.h"
#include "gui/timeline/input_files.h"
#include "gui/timeline/model_presets.h"

namespace zb::view {
namespace {

double first(const std::vector<double>& values) { return values.at(0); }

TEST(ModelPresets, CostsFollowTheShapeAndExplicitFieldsWin) {
  const auto models = model_preset_names("transformers");
  ASSERT_NE(std::find(models.begin(), models.end(), "gpt-1.5b"), models.end());
  const ModelChoice choice{"gpt-1.5b", "h100-sxm", 1};
  ProblemSpec spec = testing::uniform_spec(8, 24);
  const ProblemSpec p8 = derive_model_costs(spec, choice, {});
  ASSERT_NO_THROW((void)p8.build());
  EXPECT_GT(first(p8.t_f), 0);
  EXPECT_NE(first(p8.t_f), 1.0);  // not the spin boxes' value
  ASSERT_TRUE(p8.mem_limit);       // the limit from device memory
  spec.devices = 4;
  const ProblemSpec p4 = derive_model_costs(spec, choice, {});
  // Half the devices, about twice the layers each: the middle devices' forward time grows.
  EXPECT_GT(p4.t_f.size() > 1 ? p4.t_f[1] : first(p4.t_f), 1.5 * (p8.t_f.size() > 1 ? p8.t_f[1] : first(p8.t_f)));
  // A field the user set keeps its value.
  spec.t_w = {0.123};
  const ProblemSpec kept = derive_model_costs(spec, choice, {"t_w"});
  EXPECT_EQ(kept.t_w, std::vector<double>{0.123});
  EXPECT_THROW(derive_model_costs(spec, ModelChoice{"no-such-model", "h100-sxm", 1}, {}), InputError);
}

TEST(ModelPresets, AModelDrivenScenarioOpensWithDerivedCosts) {
  const std::string text = R"({"model": "gpt-1.5b", "hardware": "h100-sxm", "problem": {"p": 4, "m": 8}})";
  const LoadedInput input = parse_input_text(text, "model.json");
  ASSERT_EQ(input.kind, InputKind::scenario);
  EXPECT_EQ(input.scenario->spec.devices, 4);
  EXPECT_GT(first(input.scenario->spec.t_f), 0);
  EXPECT_NO_THROW((void)input.scenario->spec.build());
}

}  // namespace
}  // namespace zb::view
