// Layer partitioning: the dynamic program against an exhaustive search of every contiguous split,
// the memory check, a heavy output layer, and the torchtitan and Megatron-LM forms of a split.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <regex>

#include <nlohmann/json.hpp>

#include "models/layer_partition.h"
#include "models/partition_export.h"
#include "sim/support/error.h"
#include "sim/core/generators/generators.h"
#include "sim/app/catalog/detail/in_flight.h"
#include "sim/app/catalog/model_costs.h"
#include "tests/models/tiny_scenario.h"
#include "sim/app/catalog/preset_files.h"

namespace zb::models {
namespace {

double cost_of(const PartitionPiece& p, PartitionObjective objective) {
  switch (objective) {
    case PartitionObjective::fbw: return p.t_f_ms + p.t_b_ms + p.t_w_ms;
    case PartitionObjective::fb: return p.t_f_ms + p.t_b_ms;
    case PartitionObjective::f: return p.t_f_ms;
  }
  return 0;
}

// The smallest bottleneck over every split into stages of at least one piece each, written
// independently of the dynamic program: enumerate the cut sets, sum pieces directly.
std::optional<double> exhaustive_bottleneck(const std::vector<PartitionPiece>& pieces, const PartitionRequest& request,
                                            PartitionObjective objective) {
  const int n = static_cast<int>(pieces.size());
  std::optional<double> best;
  std::vector<int> cuts{0};
  std::function<void(int)> extend = [&](int from) {
    if (static_cast<int>(cuts.size()) == request.stages) {
      cuts.push_back(n);
      double bottleneck = 0;
      bool feasible = true;
      for (int s = 0; s < request.stages; ++s) {
        PartitionPiece group;
        for (int i = cuts[s]; i < cuts[s + 1]; ++i) {
          group.t_f_ms += pieces[i].t_f_ms, group.t_b_ms += pieces[i].t_b_ms, group.t_w_ms += pieces[i].t_w_ms;
          group.act_b_bytes += pieces[i].act_b_bytes, group.act_w_bytes += pieces[i].act_w_bytes;
          group.params += pieces[i].params;
        }
        double peak = 0;
        for (const InFlight& moment : request.in_flight[s]) {
          peak = std::max(peak, moment.forwards * group.act_b_bytes + moment.backwards * group.act_w_bytes);
        }
        const int device = request.device_of_stage[s];
        const double share = request.budget_GB / static_cast<double>(std::count(
                                                     request.device_of_stage.begin(), request.device_of_stage.end(), device));
        feasible = feasible && request.static_GB_per_param * group.params + peak * 1e-9 <= share;
        bottleneck = std::max(bottleneck, cost_of(group, objective));
      }
      if (feasible && (!best || bottleneck < *best)) best = bottleneck;
      cuts.pop_back();
      return;
    }
    for (int cut = from + 1; cut <= n - (request.stages - static_cast<int>(cuts.size())); ++cut) {
      cuts.push_back(cut);
      extend(cut);
      cuts.pop_back();
    }
  };
  if (request.stages <= n) extend(0);
  return best;
}

PartitionRequest random_request(std::mt19937& random, int stages, int chunks, bool vshape) {
  PartitionRequest request;
  request.stages = stages;
  const int devices = stages / chunks;
  for (int s = 0; s < stages; ++s) {
    const int lap = s / devices, within = s % devices;
    request.device_of_stage.push_back(vshape && lap % 2 == 1 ? devices - 1 - within : within);
  }
  std::uniform_int_distribution<int> count(0, 4);
  for (int s = 0; s < stages; ++s) {
    std::vector<InFlight> moments;
    for (int k = 0; k < 3; ++k) moments.push_back({count(random), count(random)});
    request.in_flight.push_back(moments);
  }
  request.static_GB_per_param = 1e-9;  // 1 byte per parameter, in GB
  request.budget_GB = std::uniform_real_distribution<double>(2, 30)(random) * chunks;
  return request;
}

TEST(LayerPartition, DynamicProgramMatchesExhaustiveSearch) {
  std::mt19937 random(20261201);
  std::uniform_real_distribution<double> time(0.1, 3.0), bytes(0.1e9, 1.5e9), params(0.1e9, 2e9);
  int feasible = 0, infeasible = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int layers = 1 + trial % 7;
    const int chunks = 1 + (trial / 7) % 2;
    const int devices = 1 + (trial / 14) % 3;
    const int stages = devices * chunks;
    if (stages > layers + 2) continue;
    std::vector<PartitionPiece> pieces;
    for (int i = 0; i < layers + 2; ++i) {
      pieces.push_back({time(random), time(random), time(random), bytes(random), bytes(random), params(random)});
    }
    const PartitionRequest request = random_request(random, stages, chunks, trial % 3 == 0);
    for (const auto objective : {PartitionObjective::fbw, PartitionObjective::fb, PartitionObjective::f}) {
      const auto expected = exhaustive_bottleneck(pieces, request, objective);
      const auto found = best_partition(pieces, request, objective);
      ASSERT_EQ(found.has_value(), expected.has_value()) << "trial " << trial;
      if (!found) {
        ++infeasible;
        EXPECT_NE(no_fit_reason(pieces, request).find("no split of"), std::string::npos);
        continue;
      }
      ++feasible;
      EXPECT_NEAR(found->bottleneck_ms, *expected, 1e-9) << "trial " << trial;
      // The split it returns reaches that bottleneck and fits, every stage with a piece.
      ASSERT_EQ(static_cast<int>(found->layers.size()), stages);
      int total = 0;
      for (int s = 0; s < stages; ++s) {
        total += found->layers[s];
        if (s > 0 && s + 1 < stages) {
          EXPECT_GE(found->layers[s], 1);
        }
      }
      EXPECT_EQ(total, layers);
      const auto loads = stage_loads(pieces, request, found->layers);
      double bottleneck = 0;
      for (int s = 0; s < stages; ++s) {
        const StageLoad& load = loads[s];
        bottleneck = std::max(bottleneck, cost_of({load.t_f_ms, load.t_b_ms, load.t_w_ms, 0, 0, 0}, objective));
        const auto held = std::count(request.device_of_stage.begin(), request.device_of_stage.end(),
                                     request.device_of_stage[s]);
        EXPECT_LE(load.memory_GB, request.budget_GB / static_cast<double>(held) + 1e-12);
      }
      EXPECT_NEAR(bottleneck, found->bottleneck_ms, 1e-9);
    }
  }
  // The random budgets exercise both outcomes.
  EXPECT_GT(feasible, 100);
  EXPECT_GT(infeasible, 20);
}

TEST(LayerPartition, AHeavyOutputLayerGetsFewerLayersOnTheLastStage) {
  nlohmann::json scenario = testing::tiny_scenario();
  scenario["model"]["layers"] = 16;
  // The output GEMM costs 2bshV flops in each pass: at V = 32000, h = 1024, s = 512 that is 2.4
  // layers' worth of F+B+W (a layer: bsh(72h + 12s)).
  scenario["model"]["vocab"] = 32000;
  const ModelSetup setup = model_setup_from_json(scenario, "tiny", ".", catalog::read_preset_file);
  Problem shape;
  shape.devices = 4;
  const auto partition = best_partition(model_pieces(setup), partition_request(setup, catalog::pipeline_shape(shape), {}),
                                        PartitionObjective::fbw);
  ASSERT_TRUE(partition);
  EXPECT_EQ(std::accumulate(partition->layers.begin(), partition->layers.end(), 0), 16);
  EXPECT_LT(partition->layers.back(), partition->layers[1]);
  EXPECT_LT(partition->layers.back(), 16 / 4);
}

TEST(LayerPartition, IsDeterministic) {
  nlohmann::json scenario = testing::tiny_scenario();
  scenario["model"]["layers"] = 40;
  const ModelSetup setup = model_setup_from_json(scenario, "tiny", ".", catalog::read_preset_file);
  Problem shape;
  shape.devices = 4;
  shape.chunks = 2;
  shape.placement = Placement::vshape;
  const auto pieces = model_pieces(setup);
  const auto request = partition_request(setup, catalog::pipeline_shape(shape), {});
  const auto first = partition_candidates(pieces, request);
  ASSERT_FALSE(first.empty());
  for (int k = 0; k < 3; ++k) {
    const auto again = partition_candidates(pieces, request);
    ASSERT_EQ(again.size(), first.size());
    for (std::size_t c = 0; c < first.size(); ++c) EXPECT_EQ(again[c].layers, first[c].layers);
  }
}

TEST(LayerPartition, InFlightFollowsTheScheduleOrder) {
  Problem problem;
  problem.devices = 4;
  problem.microbatches = 8;
  const auto moments = catalog::in_flight_per_stage(problem, make_1f1b(problem));
  // 1F1B's stage s runs p - s forwards before its first backward (a fused BW: nothing waits for W).
  for (int s = 0; s < 4; ++s) {
    ASSERT_FALSE(moments[s].empty());
    EXPECT_EQ(moments[s].front().forwards, 4 - s);
    for (const InFlight& moment : moments[s]) EXPECT_EQ(moment.backwards, 0);
  }
}

TEST(LayerPartition, NoSplitFitsSaysWhichStageNeedsWhat) {
  nlohmann::json scenario = testing::tiny_scenario();
  scenario["hardware"]["memory_GB"] = 0.05;
  const ModelSetup setup = model_setup_from_json(scenario, "tiny", ".", catalog::read_preset_file);
  Problem shape;
  shape.devices = 2;
  shape.microbatches = 4;
  const auto pieces = model_pieces(setup);
  const auto request = partition_request(setup, catalog::pipeline_shape(shape), catalog::in_flight_per_stage(shape, make_1f1b(shape)));
  EXPECT_TRUE(partition_candidates(pieces, request).empty());
  const std::string reason = no_fit_reason(pieces, request);
  EXPECT_NE(reason.find("no split of 4 layers into 2 stages fits device memory"), std::string::npos) << reason;
  EXPECT_NE(reason.find("GB share"), std::string::npos);
}

TEST(PartitionExport, TorchtitanModuleListsNameEveryModuleOnce) {
  EXPECT_EQ(torchtitan_module_fqns({1, 2, 0}),
            R"([["tok_embeddings","layers.0"],["layers.1","layers.2"],["norm","output"]])");
  EXPECT_EQ(torchtitan_module_fqns({3}), R"([["tok_embeddings","layers.0","layers.1","layers.2","norm","output"]])");
}

// Megatron-LM's documented reading of a layout (PipelineParallelLayerLayout.parse_str_to_list):
// commas dropped, "(...)*n" then "x*n" unrolled, stages split at '|'.
std::vector<std::string> megatron_stages(std::string layout) {
  layout.erase(std::remove(layout.begin(), layout.end(), ','), layout.end());
  const auto unroll = [](const std::string& text, const std::regex& pattern) {
    std::string out;
    auto begin = std::sregex_iterator(text.begin(), text.end(), pattern);
    std::size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      out += text.substr(last, it->position() - last);
      for (int k = 0; k < std::stoi((*it)[2]); ++k) out += (*it)[1];
      last = it->position() + it->length();
    }
    return out + text.substr(last);
  };
  layout = unroll(layout, std::regex(R"(\(([^)]+)\)\*(\d+))"));
  layout = unroll(layout, std::regex(R"((.)\*(\d+))"));
  std::vector<std::string> stages{""};
  for (const char c : layout) {
    if (c == '|') {
      stages.emplace_back();
    } else {
      EXPECT_NE(std::string("ELtm").find(c), std::string::npos) << c;
      stages.back() += c;
    }
  }
  return stages;
}

TEST(PartitionExport, MegatronLayoutReadsBackAsTheSplit) {
  // Megatron-LM's own example (DeepSeek-V3 at PP16 x VPP2) reads as documented.
  const auto example = megatron_stages("Et*3|(tt|)*29,m|L");
  ASSERT_EQ(example.size(), 32u);
  EXPECT_EQ(example[0], "Ettt");
  EXPECT_EQ(example[1], "tt");
  EXPECT_EQ(example[29], "tt");
  EXPECT_EQ(example[30], "m");
  EXPECT_EQ(example[31], "L");

  const std::vector<int> layers{0, 3, 1, 12, 2};
  const std::string layout = megatron_layout(layers);
  EXPECT_EQ(layout, "E|t*3|t|t*12|t*2L");
  const auto stages = megatron_stages(layout);
  ASSERT_EQ(stages.size(), layers.size());
  for (std::size_t s = 0; s < layers.size(); ++s) {
    EXPECT_EQ(std::count(stages[s].begin(), stages[s].end(), 't'), layers[s]);
  }
  EXPECT_EQ(stages.front().front(), 'E');  // Megatron's checks: embedding first, loss last, once each
  EXPECT_EQ(stages.back().back(), 'L');
}

}  // namespace
}  // namespace zb::models
