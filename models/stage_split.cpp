// Layer splits over stages: even, the paper's, or an explicit list.
#include "models/stage_split.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <numeric>
#include <stdexcept>

#include "models/errors.h"
#include "models/setup_infeasible.h"

namespace zb::models {

std::string Split::label() const {
  switch (kind) {
    case Kind::even: return "even";
    case Kind::paper: return "paper";
    case Kind::balanced: return "balanced";
    case Kind::list: return fmt::format("{}", fmt::join(layers, ";"));
  }
  return "?";
}

Split split_from_json(const nlohmann::json& value, std::string_view source) {
  Split split;
  if (value.is_string() && value.get<std::string>() == "even") return split;
  if (value.is_string() && value.get<std::string>() == "paper") {
    split.kind = Split::Kind::paper;
    return split;
  }
  if (value.is_string() && value.get<std::string>() == "balanced") {
    split.kind = Split::Kind::balanced;
    return split;
  }
  if (value.is_array() && !value.empty()) {
    split.kind = Split::Kind::list;
    for (const auto& item : value) {
      if (!item.is_number_integer() || item.get<double>() < 0 || item.get<double>() > 1e9) {
        throw InputError(fmt::format("{}: field 'split' has {}: expected layer counts >= 0", source, item.dump()));
      }
      split.layers.push_back(item.get<int>());
    }
    return split;
  }
  throw InputError(fmt::format("{}: field 'split' is {}: expected \"even\", \"paper\", \"balanced\" or a list of layer counts",
                               source, value.dump()));
}

std::vector<int> split_layers(int layers, int stages, const Split& split, std::string_view source) {
  if (split.kind == Split::Kind::balanced) throw std::logic_error("split_layers: a balanced split needs the model's costs");
  if (split.kind == Split::Kind::list) {
    if (static_cast<int>(split.layers.size()) != stages ||
        std::accumulate(split.layers.begin(), split.layers.end(), 0) != layers) {
      throw SetupInfeasible(fmt::format("{}: split [{}] must give {} stages {} layers in all", source,
                                        fmt::join(split.layers, ", "), stages, layers));
    }
    return split.layers;
  }
  std::vector<int> out(stages, 0);
  if (split.kind == Split::Kind::even || stages == 1) {
    if (layers < stages) {
      throw SetupInfeasible(fmt::format("{}: {} layers cannot fill {} stages", source, layers, stages));
    }
    for (int s = 0; s < stages; ++s) out[s] = layers / stages + (s < layers % stages ? 1 : 0);
    return out;
  }
  // The end stages may be left with no layer: then the embedding and the output layer stand in for
  // one (interleaved placements of the paper's k p - 2 layers over 2p stages).
  const int slots = layers + 2;
  if (slots < stages) {
    throw SetupInfeasible(fmt::format("{}: {} layers cannot fill {} stages with the paper's split", source, layers,
                                      stages));
  }
  const int rem = slots % stages;
  for (int s = 0; s < stages; ++s) out[s] = slots / stages + (s >= 1 && s <= rem ? 1 : 0);
  out[0] -= 1;
  out[stages - 1] -= 1;
  return out;
}

}  // namespace zb::models
