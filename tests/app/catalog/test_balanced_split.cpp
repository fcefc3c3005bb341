// The balanced split: layer partitioning's candidates, even and paper judged by the evaluator, and
// "split": "balanced" in a scenario running what that judgement chose.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/app/catalog/balanced_split.h"
#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/run_row.h"
#include "sim/support/error.h"
#include "tests/models/tiny_scenario.h"

namespace zb::catalog {
namespace {

// 16 layers and an output layer worth 2.4 of them (V = 32000, h = 1024), p = 4, m = 8.
Scenario heavy_head_scenario(const nlohmann::json& split = "even", int chunks = 1) {
  nlohmann::json object = models::testing::tiny_scenario();
  object["model"]["layers"] = 16;
  object["model"]["vocab"] = 32000;
  object["split"] = split;
  object["problem"] = {{"p", 4}, {"m", 8}};
  if (chunks > 1) object["problem"]["chunks"] = chunks;
  Scenario scenario = scenario_from_json(object, "heavy-head", ".");
  derive_model_costs(scenario);
  return scenario;
}

const SplitTrial& trial(const SplitChoice& choice, const std::string& label) {
  for (const SplitTrial& t : choice.trials) {
    if (t.label == label) return t;
  }
  throw std::runtime_error("no trial " + label);
}

TEST(BalancedSplit, BeatsEvenAndPaperWithAHeavyOutputLayer) {
  for (const std::string schedule : {"1f1b", "zb-h1", "zb-h2"}) {
    const SplitChoice choice = choose_split(heavy_head_scenario(), schedule, EngineOptions{});
    ASSERT_GE(choice.chosen, 0) << schedule << ": " << choice.no_fit;
    const SplitTrial& best = choice.trials[choice.chosen];
    EXPECT_EQ(best.row.status, "ok");
    ASSERT_TRUE(trial(choice, "even").row.has_metrics);
    // The output layer's 2.4 layers of work make the even split's last stage the bottleneck.
    EXPECT_LT(best.step_time, trial(choice, "even").step_time) << schedule;
    EXPECT_LE(best.step_time, trial(choice, "paper").step_time) << schedule;
    EXPECT_LT(best.layers.back(), 4) << schedule;
    EXPECT_EQ(choice.trials.front().label, "balanced F+B+W");
  }
}

TEST(BalancedSplit, TheScenarioKindRunsTheChosenSplit) {
  const SplitChoice choice = choose_split(heavy_head_scenario(), "zb-h1", EngineOptions{});
  ASSERT_GE(choice.chosen, 0);
  const Scenario balanced = heavy_head_scenario("balanced");
  const ResultRow row = run_generator_row("zb-h1", balanced, EngineOptions{}, nullptr);
  ASSERT_EQ(row.status, "ok") << row.reason;
  double step_time = 0;
  for (const auto& [name, value] : row.extras) {
    if (name == "step_time") step_time = value;
  }
  EXPECT_EQ(step_time, choice.trials[choice.chosen].step_time);
  std::string reason;
  const auto spec = spec_for_generator(balanced, generators().get("zb-h1"), reason);
  ASSERT_TRUE(spec) << reason;
  const auto ran = spec_for_generator(scenario_with_split(balanced, choice.trials[choice.chosen].layers, *spec),
                                      generators().get("zb-h1"), reason);
  ASSERT_TRUE(ran);
  EXPECT_EQ(spec->t_f, ran->t_f);
}

TEST(BalancedSplit, ChunksAndTheVPlacementSplitEveryStage) {
  for (const auto& [schedule, placement] :
       {std::pair{std::string("1f1b-i"), Placement::interleaved}, std::pair{std::string("zb-v-h"), Placement::vshape}}) {
    const SplitChoice choice = choose_split(heavy_head_scenario("even", 2), schedule, EngineOptions{});
    EXPECT_EQ(choice.shape.stages(), 8) << schedule;
    EXPECT_EQ(choice.shape.placement, placement) << schedule;
    ASSERT_GE(choice.chosen, 0) << schedule << ": " << choice.no_fit;
    const SplitTrial& best = choice.trials[choice.chosen];
    ASSERT_EQ(best.layers.size(), 8u);
    EXPECT_LE(best.step_time, trial(choice, "even").step_time) << schedule;
    // Every stage's device follows the placement (V: stage 7 is back on device 0).
    if (placement == Placement::vshape) {
      EXPECT_EQ(choice.request.device_of_stage[7], 0);
    }
  }
}

TEST(BalancedSplit, NoSplitFitsIsSaidAndIsARowStatus) {
  // Static memory fits (a 1.2 GB device against 16 bytes per parameter of 4 layers of 12.6 M
  // parameters plus the tables) but not the activations 1F1B holds at its first stage.
  nlohmann::json object = models::testing::tiny_scenario();
  object["hardware"]["memory_GB"] = 1.2;
  object["split"] = "balanced";
  object["problem"] = {{"p", 2}, {"m", 8}};
  object["microbatch_size"] = 16;
  Scenario scenario = scenario_from_json(object, "tight", ".");
  derive_model_costs(scenario);
  const SplitChoice choice = choose_split(scenario, "1f1b", EngineOptions{});
  EXPECT_EQ(choice.chosen, -1);
  EXPECT_NE(choice.no_fit.find("no split of 4 layers into 2 stages fits device memory"), std::string::npos)
      << choice.no_fit;
  const ResultRow row = run_generator_row("1f1b", scenario, EngineOptions{}, nullptr);
  EXPECT_EQ(row.status, "unsupported");
  EXPECT_NE(row.reason.find("split balanced: no split"), std::string::npos) << row.reason;
}

TEST(BalancedSplit, NeedsAModelDrivenScenario) {
  Scenario direct = scenario_from_json(nlohmann::json::parse(R"({"problem": {"p": 2, "m": 4, "t_f": 1, "t_b": 1, "t_w": 1}})"),
                                       "direct", ".");
  EXPECT_THROW(choose_split(direct, "1f1b", EngineOptions{}), InputError);
}

}  // namespace
}  // namespace zb::catalog
