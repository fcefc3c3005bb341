// A mixture-of-experts model's all-to-all, derived from the model, in the schedules: DualPipe's
// overlapped pairs hide it under the partner's compute; without the overlap every pass exposes it.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "models/cost_model.h"
#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/model_costs.h"
#include "sim/app/catalog/scenario.h"
#include "sim/core/evaluator.h"
#include "sim/core/pass_time.h"
#include "tests/models/tiny_scenario.h"

namespace zb::catalog {
namespace {

// 8 MoE layers (8 experts of 512, 2 per token) over p = 4 devices of 4 data-parallel GPUs each,
// experts split 4 ways over 2 nodes of 2 GPUs: the all-to-all crosses the 10 GB/s NIC.
Scenario moe_scenario(int chunks, double a2a_overlap, const char* placement = "vshape") {
  nlohmann::json object = models::testing::tiny_scenario();
  object["model"]["layers"] = 8;
  object["model"]["moe_experts"] = 8;
  object["model"]["moe_topk"] = 2;
  object["model"]["moe_ffn_hidden"] = 512;
  object["data_parallel"] = 4;
  object["expert_parallel"] = 4;
  object["problem"] = {{"p", 4}, {"m", 16}, {"chunks", chunks}, {"a2a_overlap", a2a_overlap}};
  if (chunks == 2) object["problem"]["placement"] = placement;
  Scenario scenario = scenario_from_json(object, "tiny-moe", ".");
  derive_model_costs(scenario);
  return scenario;
}

TEST(MoeOverlap, TheAllToAllComesFromTheModelApartFromTheCompute) {
  const Problem problem = moe_scenario(1, 1).spec.build();
  ASSERT_EQ(problem.t_a2a.size(), 4u);
  // Two layers per stage, each with a dispatch and a combine in F and in B: the same on every stage.
  EXPECT_GT(problem.t_a2a[0], 0);
  EXPECT_DOUBLE_EQ(problem.t_a2a[0], problem.t_a2a[3]);
  // F alone (compute + all-to-all) is what the cost model charges for F.
  const Scenario scenario = moe_scenario(1, 1);
  const models::StageCosts costs = models::stage_costs(*scenario.model, catalog::pipeline_shape(problem), "t");
  for (int s = 0; s < 4; ++s) {
    EXPECT_DOUBLE_EQ(pass_time(problem, Pass::F, s), costs.t_f_ms[s]) << s;
    EXPECT_DOUBLE_EQ(pass_time(problem, Pass::B, s), costs.t_b_ms[s]) << s;
    EXPECT_DOUBLE_EQ(problem.t_a2a[s], costs.t_a2a_ms[s]) << s;
  }
}

// Turning the overlap off makes each device busier by exactly what its pairs hid (their parts'
// all-to-all less the SMs' price), and the step longer; 1F1B has no pairs and does not change.
TEST(MoeOverlap, DualPipeWithoutOverlapIsSlowerByWhatItsPairsHid) {
  const Problem on = moe_scenario(2, 1).spec.build();
  const Problem off = moe_scenario(2, 0).spec.build();
  const Schedule schedule = generate(generators(), "dualpipe-v", on);
  const Trace hidden = evaluate(on, schedule), exposed = evaluate(off, schedule);
  int pairs = 0, long_a2a = 0;
  for (int d = 0; d < on.devices; ++d) {
    const auto& actions = schedule.devices[static_cast<std::size_t>(d)];
    double saved = 0;
    for (std::size_t i = 0; i + 1 < actions.size(); ++i) {
      if (!actions[i].overlap_next) continue;
      const int s1 = on.stage_of(d, actions[i].chunk), s2 = on.stage_of(d, actions[i + 1].chunk);
      const double c1 = on.t_f[static_cast<std::size_t>(s1)];
      const double c2 = (actions[i + 1].pass == Pass::BW ? on.t_bw : on.t_b)[static_cast<std::size_t>(s2)];
      const double a1 = on.t_a2a[static_cast<std::size_t>(s1)], a2 = on.t_a2a[static_cast<std::size_t>(s2)];
      const double share = on.comm_sm_share;
      // An all-to-all that ends within its partner's slowed compute costs share x a; a longer one
      // costs what it outlasts the compute by.
      const auto price = [&](double a, double c) { return a * (1 - share) <= c ? share * a : a - c; };
      saved += a1 - price(a1, c2) + a2 - price(a2, c1);
      long_a2a += a2 * (1 - share) > c1 ? 1 : 0;
      // Never more than the partner's compute is hidden.
      EXPECT_LE(pass_time(on, actions[i].pass, s1) + pass_time(on, actions[i + 1].pass, s2) -
                    overlapped_times(on, actions[i].pass, s1, actions[i + 1].pass, s2).total(),
                std::min(a1, c2) + std::min(a2, c1) + 1e-12);
      ++pairs;
      ++i;
    }
    EXPECT_NEAR(exposed.metrics.busy[static_cast<std::size_t>(d)] - hidden.metrics.busy[static_cast<std::size_t>(d)],
                saved, 1e-9 * saved)
        << d;
  }
  EXPECT_GT(pairs, 0);
  EXPECT_GT(long_a2a, 0);  // the backward's all-to-all outlasts the forward it hides under
  EXPECT_GT(exposed.metrics.makespan, hidden.metrics.makespan);
  const Problem linear_on = moe_scenario(1, 1).spec.build(), linear_off = moe_scenario(1, 0).spec.build();
  const Schedule one_f_one_b = generate(generators(), "1f1b", linear_on);
  EXPECT_DOUBLE_EQ(evaluate(linear_on, one_f_one_b).metrics.makespan,
                   evaluate(linear_off, one_f_one_b).metrics.makespan);
}

// Megatron's EP overlap on interleaved 1F1B: one more warm-up forward, then F&BW pairs that hide
// the all-to-all; with nothing hidden it is no faster than the plain order.
TEST(MoeOverlap, InterleavedOneFOneBWithEpOverlapHidesTheAllToAll) {
  const Problem on = moe_scenario(2, 1, "interleaved").spec.build();
  const Problem off = moe_scenario(2, 0, "interleaved").spec.build();
  const Schedule plain = generate(generators(), "1f1b-i", on);
  const Schedule paired = generate(generators(), "1f1b-i-a2a", on);
  ASSERT_TRUE(std::any_of(paired.devices[0].begin(), paired.devices[0].end(), [](const Action& a) { return a.overlap_next; }));
  const double unpaired = evaluate(on, plain).metrics.makespan;
  EXPECT_LT(evaluate(on, paired).metrics.makespan, unpaired);
  EXPECT_GE(evaluate(off, paired).metrics.makespan, unpaired - 1e-9);
}

}  // namespace
}  // namespace zb::catalog
