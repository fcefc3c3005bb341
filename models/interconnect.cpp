// Links between pipeline devices, from a cluster preset or a hardware preset.
#include "models/interconnect.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/errors.h"
#include "models/detail/json_fields.h"
#include "models/setup_infeasible.h"

namespace zb::models {

int Interconnect::gpu_of_device(int device) const {
  return device < static_cast<int>(device_to_gpu.size()) ? device_to_gpu[device] : device * gpus_per_device;
}

const Link& Interconnect::link_between(int device_a, int device_b) const {
  const int node_a = gpu_of_device(device_a) / gpus_per_node;
  const int node_b = gpu_of_device(device_b) / gpus_per_node;
  return node_a == node_b ? intra_node : inter_node;
}

void Interconnect::check_devices(int devices, std::string_view source) const {
  if (nodes > 0 && static_cast<long long>(devices) * gpus_per_device > static_cast<long long>(nodes) * gpus_per_node) {
    throw SetupInfeasible(
        gpus_per_device == 1
            ? fmt::format("{}: cluster '{}' has {} GPUs, p = {} needs one per device", source, name,
                          nodes * gpus_per_node, devices)
            : fmt::format("{}: cluster '{}' has {} GPUs, p = {} devices of {} GPUs (tensor x data parallel) need {}",
                          source, name, nodes * gpus_per_node, devices, gpus_per_device,
                          static_cast<long long>(devices) * gpus_per_device));
  }
  if (!device_to_gpu.empty() && static_cast<int>(device_to_gpu.size()) < devices) {
    throw SetupInfeasible(fmt::format("{}: cluster '{}' maps {} devices to GPUs, p = {}", source, name,
                                      device_to_gpu.size(), devices));
  }
}

Interconnect interconnect_from_cluster(const nlohmann::json& object, std::string_view source) {
  if (!object.is_object()) throw InputError(fmt::format("{}: a cluster must be a JSON object", source));
  Interconnect net;
  net.name = string_field_or(object, "name", source, "cluster");
  net.nodes = int_field(object, "nodes", source, 1);
  net.gpus_per_node = int_field(object, "gpus_per_node", source, 1);
  auto read_link = [&](std::string_view key) {
    Link link;
    const auto it = object.find(key);
    if (it == object.end()) return link;
    const std::string context = fmt::format("{}: field '{}'", source, key);
    if (!it->is_object()) throw InputError(context + " must be an object");
    link.bandwidth_GBps = number_field(*it, "bandwidth_GBps", context, 1e-9);
    link.latency_us = number_field_or(*it, "latency_us", context, 0, 0);
    return link;
  };
  if (!object.contains("intra_node")) throw InputError(fmt::format("{}: missing field 'intra_node'", source));
  net.intra_node = read_link("intra_node");
  net.inter_node = object.contains("inter_node") ? read_link("inter_node") : net.intra_node;
  if (const auto it = object.find("device_to_gpu"); it != object.end() && it->is_array()) {
    for (const auto& gpu : *it) {
      if (!gpu.is_number_integer() || gpu.get<double>() < 0 || gpu.get<double>() >= net.nodes * net.gpus_per_node) {
        throw InputError(fmt::format("{}: field 'device_to_gpu' has {}: expected GPU indices below {}", source,
                                     gpu.dump(), net.nodes * net.gpus_per_node));
      }
      net.device_to_gpu.push_back(gpu.get<int>());
    }
  }
  return net;
}

Interconnect interconnect_from_hardware(const HardwareSpec& hardware) {
  Interconnect net;
  net.name = hardware.name;
  net.gpus_per_node = hardware.gpus_per_node;
  net.intra_node = hardware.nvlink;
  net.inter_node = hardware.nic;
  return net;
}

}  // namespace zb::models
