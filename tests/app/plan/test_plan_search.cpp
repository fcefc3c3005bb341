// zbsim recommend's search against the whole space evaluated without pruning, its determinism
// across --jobs, and its errors. The model is small enough (8 layers, 3 GB GPUs) that the
// exhaustive reference runs in seconds and memory decides between plans.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/app/plan/plan_files.h"
#include "sim/app/plan/plan_search.h"
#include "sim/support/error.h"
#include "tests/testing/input_error.h"

namespace zb {
namespace {

const std::string kData = std::string(ZB_SOURCE_DIR) + "/tests/app/plan/data/";

plan::PlanQuery tiny_query(int gpus, int global_batch) {
  plan::PlanQuery query;
  query.model = kData + "tiny-llama.json";
  query.hardware = kData + "small-gpu.json";
  query.cluster = kData + "16x4-ib200.json";
  query.gpus = gpus;
  query.global_batch = global_batch;
  query.confirm_simgrid = false;
  return query;
}

std::vector<std::pair<std::string, double>> ranking(const plan::PlanSearch& search) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& r : search.top) out.emplace_back(r.candidate.label(), r.step_time_s);
  return out;
}

TEST(PlanSearch, PrunedSearchFindsTheExhaustiveTopTen) {
  // The last two: few microbatches per pipeline, where the bound's ramp term does the pruning.
  for (const auto& [gpus, batch] : {std::pair{8, 16}, std::pair{4, 8}, std::pair{16, 8}, std::pair{8, 4}}) {
    plan::PlanQuery query = tiny_query(gpus, batch);
    const plan::PlanSearch pruned = plan::search_plans(query);
    query.prune = false;
    const plan::PlanSearch exhaustive = plan::search_plans(query);
    ASSERT_EQ(pruned.top.size(), 10u);
    EXPECT_EQ(ranking(pruned), ranking(exhaustive)) << gpus << " GPUs, batch " << batch;
    // Pruning did something, and the exhaustive run evaluated every buildable candidate.
    EXPECT_GT(pruned.pruned_bound + pruned.pruned_memory, exhaustive.pruned_memory);
    EXPECT_LT(pruned.evaluated, exhaustive.evaluated);
    EXPECT_EQ(exhaustive.pruned_bound, 0);
    EXPECT_EQ(exhaustive.evaluated + exhaustive.pruned_memory, exhaustive.candidates);
    // Memory decides (at the larger batches per replica): some candidates do not fit, and every listed plan does.
    if (batch / gpus >= 2) {
      EXPECT_GT(exhaustive.over_limit + exhaustive.pruned_memory, 0);
    }
    for (const auto& r : pruned.top) EXPECT_LE(r.memory_GB, 3.0) << r.candidate.label();
    // Ranked by step time; only the first has no reason.
    for (std::size_t k = 1; k < pruned.top.size(); ++k) {
      EXPECT_LE(pruned.top[k - 1].step_time_s, pruned.top[k].step_time_s);
      EXPECT_FALSE(pruned.top[k].loses_because.empty());
    }
    EXPECT_TRUE(pruned.top[0].loses_because.empty());
  }
}

// The bound the search prunes with (step_bound.h) under every evaluated plan of the whole space:
// every generator, chunk shape, split, recomputation and sharding, on shapes whose ramp and memory
// terms bite (pp up to 8 with m from 2 to 16).
TEST(PlanSearch, NoEvaluatedPlanBeatsItsBound) {
  for (const auto& [gpus, batch] : {std::pair{8, 16}, std::pair{8, 4}, std::pair{16, 8}, std::pair{4, 8}}) {
    plan::PlanQuery query = tiny_query(gpus, batch);
    query.prune = false;
    query.top = 1 << 20;  // every plan that fits
    const plan::PlanSearch all = plan::search_plans(query);
    ASSERT_GT(all.top.size(), 50u);
    int ramp_bites = 0;
    for (const auto& r : all.top) {
      EXPECT_GE(r.step_time_s, r.bound_s * (1 - 1e-9)) << r.candidate.label();
      EXPECT_GE(r.bound_s, r.compute_s) << r.candidate.label();
      if (r.bound_s > r.compute_s * 1.05) ++ramp_bites;
    }
    // The ramp term is more than the compute bound for a real share of the space.
    EXPECT_GT(ramp_bites, 10) << gpus << " GPUs, batch " << batch;
  }
}

TEST(PlanSearch, ParetoPlansAreNotDominated) {
  const plan::PlanSearch search = plan::search_plans(tiny_query(8, 16));
  ASSERT_FALSE(search.pareto.empty());
  for (std::size_t k = 1; k < search.pareto.size(); ++k) {
    EXPECT_GT(search.pareto[k].memory_GB, search.pareto[k - 1].memory_GB);
    EXPECT_LT(search.pareto[k].step_time_s, search.pareto[k - 1].step_time_s);
  }
  EXPECT_EQ(search.pareto.back().step_time_s, search.top.front().step_time_s);
}

TEST(PlanSearch, SameAnswerForAnyJobCount) {
  plan::PlanQuery query = tiny_query(8, 16);
  query.jobs = 1;
  const plan::PlanSearch one = plan::search_plans(query);
  query.jobs = 3;
  const plan::PlanSearch three = plan::search_plans(query);
  EXPECT_EQ(ranking(one), ranking(three));
  EXPECT_EQ(one.evaluated, three.evaluated);
  EXPECT_EQ(one.pruned_bound, three.pruned_bound);
  EXPECT_EQ(one.winner_scenario, three.winner_scenario);
  EXPECT_EQ(plan::pareto_svg(one), plan::pareto_svg(three));
}

TEST(PlanSearch, WinnerScenarioNamesTheWinningPlan) {
  const plan::PlanSearch search = plan::search_plans(tiny_query(8, 16));
  const auto scenario = nlohmann::json::parse(search.winner_scenario);
  const auto& best = search.top.front().candidate;
  EXPECT_EQ(scenario["tensor_parallel"], best.tp);
  EXPECT_EQ(scenario["data_parallel"], best.dp);
  EXPECT_EQ(scenario["problem"]["p"], best.pp);
  EXPECT_EQ(scenario["problem"]["m"], best.microbatches);
  EXPECT_EQ(best.pp * best.tp * best.dp, 8);
  EXPECT_EQ(best.microbatches * best.microbatch_size * best.dp, 16);
  EXPECT_EQ(scenario["schedules"][0], best.schedule);
}

// A mixture-of-experts model: the search also spreads the experts over power-of-two groups of a
// stage's GPUs, the pruned search still finds the exhaustive top ten, and the winner's scenario
// carries its expert parallelism.
TEST(PlanSearch, MixtureOfExpertsSearchesExpertParallelism) {
  plan::PlanQuery query = tiny_query(8, 16);
  query.model = kData + "tiny-moe.json";
  const plan::PlanSearch pruned = plan::search_plans(query);
  query.prune = false;
  const plan::PlanSearch exhaustive = plan::search_plans(query);
  EXPECT_EQ(ranking(pruned), ranking(exhaustive));
  bool spread = false;
  for (const auto& r : exhaustive.top) {
    const auto& c = r.candidate;
    EXPECT_EQ(16 % c.ep, 0) << c.label();
    EXPECT_EQ((c.tp * c.dp) % c.ep, 0) << c.label();
    spread = spread || c.ep > 1;
  }
  EXPECT_TRUE(spread);
  const auto scenario = nlohmann::json::parse(pruned.winner_scenario);
  EXPECT_EQ(scenario.value("expert_parallel", 1), pruned.top.front().candidate.ep);
  // A dense model has no experts to spread.
  EXPECT_EQ(plan::search_plans(tiny_query(8, 16)).top.front().candidate.ep, 1);
}

TEST(PlanSearch, ErrorsNameTheFlagAndValue) {
  using testing::error_of;
  plan::PlanQuery query = tiny_query(8, 16);
  query.model = "no-such-model";
  EXPECT_NE(error_of([&] { plan::search_plans(query); }).find("no-such-model"), std::string::npos);
  query = tiny_query(8, 16);
  query.cluster = "no-such-cluster";
  EXPECT_NE(error_of([&] { plan::search_plans(query); }).find("no-such-cluster"), std::string::npos);
  // 64 GPUs and 8 layers of tensor degree at most 4: dp >= 2, which 3 sequences cannot split into.
  query = tiny_query(64, 3);
  EXPECT_NE(error_of([&] { plan::search_plans(query); }).find("--global-batch: 3 is not divisible"), std::string::npos);
  query = tiny_query(100, 16);
  EXPECT_NE(error_of([&] { plan::search_plans(query); }).find("--gpus: 100"), std::string::npos);
  // Two hardware presets have the cluster's 312 TFLOPS: the user must choose.
  query = tiny_query(8, 16);
  query.hardware.clear();
  const std::string ambiguous = error_of([&] { plan::search_plans(query); });
  EXPECT_NE(ambiguous.find("--hardware"), std::string::npos) << ambiguous;
  EXPECT_NE(ambiguous.find("a100-80gb-pcie"), std::string::npos) << ambiguous;
  // One GPU of 3 GB cannot hold the model's 3.4 GB of training state: the closest candidate is named.
  query = tiny_query(1, 4);
  const std::string nothing = error_of([&] { plan::search_plans(query); });
  EXPECT_NE(nothing.find("nothing fits"), std::string::npos) << nothing;
  EXPECT_NE(nothing.find("closest: pp1 tp1 dp1"), std::string::npos) << nothing;
}

}  // namespace
// A split that Megatron's first/last-stage flags cannot state is written as its layout string
// (10 layers evenly over 4 stages: 3, 3, 2, 2; the middle stages differ).
TEST(PlanFiles, MegatronGetsTheLayoutStringWhenTheMiddleStagesDiffer) {
  plan::PlanCandidate plan;
  plan.pp = 4;
  plan.placement = "linear";
  plan.schedule = "1f1b";
  plan.split = "even";
  plan.recompute = "none";
  plan.sharding = "none";
  const std::string flags = plan::megatron_settings(plan, 64, 4096, 10);
  EXPECT_NE(flags.find("--pipeline-model-parallel-layout Et*3|t*3|t*2|t*2L\n"), std::string::npos) << flags;
  EXPECT_EQ(flags.find("--decoder-first-pipeline-num-layers"), std::string::npos) << flags;
  // 9 layers: 3, 2, 2, 2 is stated by the first-stage flag, no layout needed.
  const std::string even_middle = plan::megatron_settings(plan, 64, 4096, 9);
  EXPECT_NE(even_middle.find("--decoder-first-pipeline-num-layers 3"), std::string::npos) << even_middle;
  EXPECT_EQ(even_middle.find("--pipeline-model-parallel-layout"), std::string::npos) << even_middle;
}

}  // namespace zb
