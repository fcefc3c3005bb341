// Hardware and network presets.
#include "models/hardware.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

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

HardwareSpec hardware_from_json(const nlohmann::json& object, std::string_view source,
                                const std::filesystem::path& base_dir, const ReadJsonFile& read) {
  if (!object.is_object()) throw InputError(fmt::format("{}: hardware must be a JSON object", source));
  check_known_fields(object,
                     {"name", "description", "peak_tflops_bf16", "memory_bandwidth_GBps", "sm_count",
                      "gemm_sustained_fraction", "memory_sustained_fraction", "memory_GB", "reserved_GB", "nvlink",
                      "gpus_per_node", "nic"},
                     source);
  HardwareSpec spec;
  spec.name = string_field_or(object, "name", source, "");
  spec.peak_tflops_bf16 = number_field(object, "peak_tflops_bf16", source, 1e-9);
  spec.memory_bandwidth_GBps = number_field(object, "memory_bandwidth_GBps", source, 1e-9);
  spec.sm_count = int_field(object, "sm_count", source, 1);
  spec.gemm_sustained_fraction = fraction_field_or(object, "gemm_sustained_fraction", source, kGemmSustainedFraction);
  spec.memory_sustained_fraction =
      fraction_field_or(object, "memory_sustained_fraction", source, kMemorySustainedFraction);
  spec.memory_GB = number_field(object, "memory_GB", source, 1e-9);
  spec.reserved_GB = number_field_or(object, "reserved_GB", source, 0, 0);
  spec.gpus_per_node = int_field_or(object, "gpus_per_node", source, 1, 8);
  if (!object.contains("nvlink")) throw InputError(fmt::format("{}: missing field 'nvlink'", source));
  spec.nvlink = link_from_json(object["nvlink"], fmt::format("{}: field 'nvlink'", source));
  if (!object.contains("nic")) throw InputError(fmt::format("{}: missing field 'nic'", source));
  const PresetRef nic = resolve_preset("network", object["nic"], base_dir, fmt::format("{}: field 'nic'", source), read);
  spec.nic = link_from_json(nic.object, nic.path.empty() ? fmt::format("{}: field 'nic'", source) : nic.path.string());
  return spec;
}

}  // namespace zb::models
