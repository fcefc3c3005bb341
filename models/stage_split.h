// How a model's layers are divided into pipeline stages.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace zb::models {

// even: layers / stages each, the remainder one more on the first stages.
// paper: the Zero Bubble paper's split, where the first and last stage hold one layer fewer (they
//   also hold the embedding and the output layer): the layers plus two split evenly, minus one at
//   both ends; the remainder goes to the stages after the first. With one slot per stage the ends
//   hold no layer, only the embedding and the output layer.
// list: the layer count of every stage, given explicitly.
// balanced: found by layer partitioning (models/layer_partition.h): per schedule, the split among
//   the dynamic program's candidates, even and paper that the evaluator runs fastest within device
//   memory (sim/app/catalog/balanced_split.h); without a schedule, the candidate with the smallest
//   bottleneck F+B+W.
struct Split {
  enum class Kind { even, paper, list, balanced } kind = Kind::even;
  std::vector<int> layers;  // kind == list

  std::string label() const;  // "even", "paper", "balanced", or "3;4;4;3"
};

// "even" | "paper" | "balanced" | [3, 4, 4, 3]; errors name `source`.
Split split_from_json(const nlohmann::json& value, std::string_view source);

// Layers per stage of an even, paper or list split (a balanced one needs the model's costs:
// cost_model.cpp). Throws SetupInfeasible when the stages cannot all get layers (more stages
// than layers, a list of another length or total).
std::vector<int> split_layers(int layers, int stages, const Split& split, std::string_view source);

}  // namespace zb::models
