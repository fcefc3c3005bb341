// torchtitan module lists and Megatron layout strings from layers per stage.
#include "models/partition_export.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace zb::models {

std::string torchtitan_module_fqns(const std::vector<int>& layers) {
  nlohmann::json stages = nlohmann::json::array();
  int next = 0;
  for (std::size_t s = 0; s < layers.size(); ++s) {
    nlohmann::json modules = nlohmann::json::array();
    if (s == 0) modules.push_back("tok_embeddings");
    for (int k = 0; k < layers[s]; ++k) modules.push_back(fmt::format("layers.{}", next++));
    if (s + 1 == layers.size()) {
      modules.push_back("norm");
      modules.push_back("output");
    }
    stages.push_back(std::move(modules));
  }
  return stages.dump();
}

std::string megatron_layout(const std::vector<int>& layers) {
  std::string layout;
  for (std::size_t s = 0; s < layers.size(); ++s) {
    if (s > 0) layout += '|';
    if (s == 0) layout += 'E';
    if (layers[s] == 1) layout += 't';
    if (layers[s] > 1) layout += fmt::format("t*{}", layers[s]);
    if (s + 1 == layers.size()) layout += 'L';
  }
  return layout;
}

}  // namespace zb::models
