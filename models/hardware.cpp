// Hardware and network presets.
#include "models/hardware.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <vector>

#include "models/errors.h"
#include "models/detail/json_fields.h"
#include "models/presets.h"

namespace zb::models {

Link link_from_json(const nlohmann::json& object, std::string_view source) {
  if (!object.is_object()) throw InputError(fmt::format("{}: a link must be a JSON object", source));
  check_known_fields(object, {"name", "description", "bandwidth_GBps", "latency_us"}, source);
  Link link;
  link.bandwidth_GBps = number_field(object, "bandwidth_GBps", source, 1e-9);
  link.latency_us = number_field_or(object, "latency_us", source, 0, 0);
  return link;
}

void write_efficiencies(const Efficiencies& e, nlohmann::json& object) {
  for (const EfficiencyField& field : kEfficiencyFields) object[std::string(field.name)] = e.*field.member;
}

std::string_view cost_model_name(CostModel cost_model) {
  return cost_model == CostModel::calibrated ? "calibrated" : "roofline";
}

std::optional<CostModel> cost_model_from_name(std::string_view name) {
  for (const CostModel cost_model : {CostModel::calibrated, CostModel::roofline}) {
    if (cost_model_name(cost_model) == name) return cost_model;
  }
  return std::nullopt;
}

namespace {

// `before`, the efficiencies' field names, then `after`: a known-fields list.
std::vector<std::string_view> with_efficiency_fields(std::initializer_list<std::string_view> before,
                                                     std::initializer_list<std::string_view> after) {
  std::vector<std::string_view> names(before);
  for (const EfficiencyField& field : kEfficiencyFields) names.push_back(field.name);
  names.insert(names.end(), after);
  return names;
}

// The efficiency fields `object` gives, over `base`.
Efficiencies efficiencies_over(const Efficiencies& base, const nlohmann::json& object, std::string_view source) {
  Efficiencies e = base;
  for (const EfficiencyField& field : kEfficiencyFields) {
    double& value = e.*field.member;
    value = field.fraction ? fraction_field_or(object, field.name, source, value)
                           : number_field_or(object, field.name, source, 0, value);
  }
  return e;
}

// A preset's fitted efficiencies: the six values and where they came from (documentation).
Efficiencies calibration_from_json(const nlohmann::json& object, std::string_view source) {
  const std::string context = fmt::format("{}: calibration", source);
  if (!object.is_object()) throw InputError(fmt::format("{}: expected an object", context));
  check_known_fields(object,
                     with_efficiency_fields({"architecture", "preset"},
                                            {"fitted_on", "cross_validation", "command", "not_informed"}),
                     context);
  for (const std::string_view key : with_efficiency_fields({}, {"fitted_on", "cross_validation"})) {
    if (!object.contains(key)) throw InputError(fmt::format("{}: missing field '{}'", context, key));
  }
  return efficiencies_over(Efficiencies{}, object, context);
}

}  // namespace

HardwareSpec hardware_from_json(const nlohmann::json& object, std::string_view source,
                                const std::filesystem::path& base_dir, const ReadJsonFile& read, CostModel cost_model,
                                std::string_view preset) {
  if (!object.is_object()) throw InputError(fmt::format("{}: hardware must be a JSON object", source));
  check_known_fields(object,
                     with_efficiency_fields({"name", "description", "architecture", "peak_tflops_bf16", "peak_tflops_fp8",
                                             "memory_bandwidth_GBps", "sm_count"},
                                            {"calibration", "memory_GB", "reserved_GB", "nvlink", "gpus_per_node", "nic", "host_link",
                                             "host_link_sustained_fraction"}),
                     source);
  HardwareSpec spec;
  spec.name = string_field_or(object, "name", source, "");
  spec.architecture = string_field_or(object, "architecture", source, "");
  spec.peak_tflops_bf16 = number_field(object, "peak_tflops_bf16", source, 1e-9);
  spec.peak_tflops_fp8 = number_field_or(object, "peak_tflops_fp8", source, 0, 0);
  spec.memory_bandwidth_GBps = number_field(object, "memory_bandwidth_GBps", source, 1e-9);
  spec.sm_count = int_field(object, "sm_count", source, 1);
  Efficiencies calibrated;
  if (object.contains("calibration")) {
    calibrated = calibration_from_json(object["calibration"], source);
  } else {
    for (const std::string_view name : {preset, std::string_view(spec.architecture)}) {
      if (name.empty()) continue;
      const std::filesystem::path file = presets_dir() / "calibration" / (std::string(name) + ".json");
      std::error_code missing;
      if (!std::filesystem::exists(file, missing)) continue;
      calibrated = calibration_from_json(read(file, "calibration"), file.string());
      break;
    }
  }
  spec.calibrated = efficiencies_over(calibrated, object, source);
  spec.roofline = efficiencies_over(Efficiencies{}, object, source);
  // The roofline runs attention's tiles at the GEMM rate (kAttentionSustainedFraction), also when
  // the object sets that rate and not attention's.
  if (object.contains("gemm_sustained_fraction") && !object.contains("attention_sustained_fraction")) {
    spec.roofline.attention_sustained_fraction = spec.roofline.gemm_sustained_fraction;
  }
  spec.use(cost_model);
  spec.memory_GB = number_field(object, "memory_GB", source, 1e-9);
  spec.reserved_GB = number_field_or(object, "reserved_GB", source, 0, 0);
  spec.gpus_per_node = int_field_or(object, "gpus_per_node", source, 1, 8);
  if (!object.contains("nvlink")) throw InputError(fmt::format("{}: missing field 'nvlink'", source));
  spec.nvlink = link_from_json(object["nvlink"], fmt::format("{}: field 'nvlink'", source));
  if (!object.contains("nic")) throw InputError(fmt::format("{}: missing field 'nic'", source));
  const PresetRef nic = resolve_preset("network", object["nic"], base_dir, fmt::format("{}: field 'nic'", source), read);
  spec.nic = link_from_json(nic.object, nic.path.empty() ? fmt::format("{}: field 'nic'", source) : nic.path.string());
  // Optional: without it the model gives no offload times (schedules that offload are refused).
  if (object.contains("host_link")) {
    spec.host_link = link_from_json(object["host_link"], fmt::format("{}: field 'host_link'", source));
  }
  spec.host_link_sustained_fraction =
      number_field_or(object, "host_link_sustained_fraction", source, 1e-3, kHostLinkSustainedFraction);
  if (spec.host_link_sustained_fraction > 1) {
    throw InputError(fmt::format("{}: field 'host_link_sustained_fraction' is {}: expected a fraction in (0, 1]", source,
                                 spec.host_link_sustained_fraction));
  }
  return spec;
}

}  // namespace zb::models
