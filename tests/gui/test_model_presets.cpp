// Model-driven costs in the explorer (only when zbview is built with models/).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/gui/gui_test_support.h"
#include "sim/support/error.h"
#include "gui/viewer_core/explorer_run.h"
#include "gui/viewer_core/input_files.h"
#include "sim/app/catalog/generators.h"
#include "gui/viewer_core/model_presets.h"

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

// Each schedule at its natural chunk count (zbsim compare's rule) under one model: with the panel at
// two chunks, the model's costs are per stage, yet 1f1b runs at one chunk and zb-v at two, both
// with the model's costs for their shape and the same total work.
TEST(ModelPresets, EverySchedulesShapeGetsTheModelsCostsForIt) {
  const ModelChoice choice{"gpt-1.5b", "h100-sxm", 1};
  ProblemSpec panel = testing::uniform_spec(4, 8);
  panel.chunks = 2;
  panel = derive_model_costs(panel, choice, {});
  const auto& registry = catalog::generators();
  std::string reason;
  const auto one_chunk = spec_for_schedule(panel, registry.get("1f1b"), choice, {}, reason);
  ASSERT_TRUE(one_chunk) << reason;
  EXPECT_EQ(one_chunk->chunks, 1);
  const auto v_shape = spec_for_schedule(panel, registry.get("zb-v"), choice, {}, reason);
  ASSERT_TRUE(v_shape) << reason;
  EXPECT_EQ(v_shape->chunks, 2);
  ASSERT_TRUE(v_shape->placement);
  EXPECT_EQ(*v_shape->placement, Placement::vshape);
  const Problem a = one_chunk->build(), b = v_shape->build();
  double work_a = 0, work_b = 0;
  for (int d = 0; d < 4; ++d) {
    for (int s = 0; s < a.stages(); ++s) {
      if (a.device_of_stage(s) == d) work_a += a.t_f[s] + a.t_b[s] + a.t_w[s];
    }
    for (int s = 0; s < b.stages(); ++s) {
      if (b.device_of_stage(s) == d) work_b += b.t_f[s] + b.t_b[s] + b.t_w[s];
    }
  }
  EXPECT_NEAR(work_a, work_b, 1e-6 * work_a);  // the same layers, split into one or two chunks
  // Without the model the catalog's rule applies as is: per-stage costs cannot be reshaped.
  EXPECT_FALSE(spec_for_schedule(panel, registry.get("1f1b"), std::nullopt, {}, reason));
  EXPECT_NE(reason.find("needs chunks=1"), std::string::npos) << reason;
}

}  // namespace
}  // namespace zb::view
