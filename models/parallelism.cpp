// Reading the parallelism fields of a scenario.
#include "models/parallelism.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/detail/json_fields.h"
#include "models/errors.h"

namespace zb::models {

namespace {

constexpr std::pair<std::string_view, Recompute> kRecompute[] = {
    {"none", Recompute::none}, {"selective", Recompute::selective}, {"full", Recompute::full}};
constexpr std::pair<std::string_view, Sharding> kSharding[] = {{"none", Sharding::none},
                                                              {"zero-1", Sharding::zero1},
                                                              {"zero-2", Sharding::zero2},
                                                              {"zero-3", Sharding::zero3},
                                                              {"fsdp", Sharding::fsdp}};

template <typename Enum, std::size_t N>
Enum parse_choice(const nlohmann::json& scenario, std::string_view key, std::string_view source,
                  const std::pair<std::string_view, Enum> (&choices)[N]) {
  const std::string text = string_field_or(scenario, key, source, std::string(choices[0].first));
  std::string known;
  for (const auto& [name, value] : choices) {
    if (name == text) return value;
    known += known.empty() ? std::string(name) : fmt::format(", {}", name);
  }
  throw InputError(fmt::format("{}: field '{}' is \"{}\": expected one of {}", source, key, text, known));
}

template <typename Enum, std::size_t N>
std::string_view name_of(Enum value, const std::pair<std::string_view, Enum> (&choices)[N]) {
  for (const auto& [name, choice] : choices) {
    if (choice == value) return name;
  }
  return "?";
}

}  // namespace

std::string_view recompute_name(Recompute recompute) { return name_of(recompute, kRecompute); }
std::string_view sharding_name(Sharding sharding) { return name_of(sharding, kSharding); }

bool* recompute_module_flag(RecomputeModules& modules, std::string_view name) {
  if (name == "core_attn") return &modules.core_attn;
  if (name == "layernorm") return &modules.layernorm;
  if (name == "mla_up_proj") return &modules.mla_up_proj;
  if (name == "moe_act") return &modules.moe_act;
  return nullptr;
}

Parallelism parallelism_from_json(const nlohmann::json& scenario, std::string_view source) {
  Parallelism parallel;
  parallel.tensor = int_field_or(scenario, "tensor_parallel", source, 1, 1);
  parallel.sequence_parallel = bool_field_or(scenario, "sequence_parallel", source, false);
  parallel.tp_comm_overlap = bool_field_or(scenario, "tp_comm_overlap", source, false);
  parallel.context = int_field_or(scenario, "context_parallel", source, 1, 1);
  parallel.data = int_field_or(scenario, "data_parallel", source, 1, 1);
  parallel.expert = int_field_or(scenario, "expert_parallel", source, 1, 1);
  parallel.moe_imbalance = number_field_or(scenario, "moe_imbalance", source, 1, 1);
  parallel.sharding = parse_choice(scenario, "sharding", source, kSharding);
  parallel.recompute = parse_choice(scenario, "recompute", source, kRecompute);
  if (scenario.contains("recompute_modules")) {
    const nlohmann::json& modules = scenario["recompute_modules"];
    if (parallel.recompute != Recompute::selective) {
      throw InputError(fmt::format("{}: field 'recompute_modules' needs \"recompute\": \"selective\"", source));
    }
    if (!modules.is_array() || modules.empty()) {
      throw InputError(fmt::format("{}: field 'recompute_modules' is {}: expected a non-empty list of core_attn, "
                                   "layernorm, mla_up_proj, moe_act",
                                   source, modules.dump()));
    }
    parallel.recompute_modules = RecomputeModules{false, false, false, false};
    for (const nlohmann::json& module : modules) {
      const std::string name = module.is_string() ? module.get<std::string>() : module.dump();
      bool* flag = recompute_module_flag(parallel.recompute_modules, name);
      if (flag == nullptr) {
        throw InputError(fmt::format("{}: field 'recompute_modules' has {}: expected core_attn, layernorm, "
                                     "mla_up_proj or moe_act",
                                     source, module.dump()));
      }
      *flag = true;
    }
  }
  if (parallel.tp_comm_overlap && parallel.tensor > 1 && !parallel.sequence_parallel) {
    // Without sequence parallelism the collectives are all-reduces, which neither framework splits.
    throw InputError(fmt::format("{}: field 'tp_comm_overlap' is true, but it needs \"sequence_parallel\": true", source));
  }
  return parallel;
}

}  // namespace zb::models
