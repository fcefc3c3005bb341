// Cluster JSON: reading, validation with precise messages, writing back.
#include "sim/simgrid/cluster.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>

#include "sim/support/kept_file.h"
#include "sim/support/error.h"
#include "sim/support/json_text.h"

namespace zb {

namespace {

using nlohmann::json;

[[noreturn]] void fail(std::string_view source, std::string_view field, const std::string& value,
                       std::string_view why) {
  throw InputError(fmt::format("{}: field '{}' is {}: {}", source, field, value, why));
}

void check_fields(const json& object, std::string_view source, std::string_view prefix,
                  std::initializer_list<std::string_view> known) {
  if (!object.is_object()) fail(source, prefix.empty() ? "(top level)" : prefix, object.dump(), "expected an object");
  for (const auto& [key, value] : object.items()) {
    bool found = false;
    for (const auto name : known) found |= key == name;
    if (!found) {
      std::string names;
      for (const auto name : known) names += fmt::format("{}{}", names.empty() ? "" : ", ", name);
      throw InputError(fmt::format("{}: unknown field '{}{}' (known: {})", source, prefix.empty() ? "" : fmt::format("{}.", prefix),
                                   key, names));
    }
  }
}

double positive_number(const json& value, std::string_view source, std::string_view field, bool allow_zero) {
  if (!value.is_number()) fail(source, field, value.dump(), "expected a number");
  const double number = value.get<double>();
  if (!std::isfinite(number) || number < 0 || (!allow_zero && number == 0)) {
    fail(source, field, value.dump(), allow_zero ? "expected a number >= 0" : "expected a number > 0");
  }
  return number;
}

int positive_int(const json& value, std::string_view source, std::string_view field) {
  if (!value.is_number_integer() || value.get<long long>() < 1 || value.get<long long>() > 1'000'000) {
    fail(source, field, value.dump(), "expected an integer >= 1");
  }
  return value.get<int>();
}

LinkSpec link_from_json(const json& object, std::string_view source, std::string_view field,
                        std::initializer_list<std::string_view> known) {
  check_fields(object, source, field, known);
  LinkSpec link;
  const std::string bandwidth = fmt::format("{}.bandwidth_GBps", field);
  const std::string latency = fmt::format("{}.latency_us", field);
  if (!object.contains("bandwidth_GBps")) fail(source, bandwidth, "missing", "expected a number > 0");
  link.bandwidth_GBps = positive_number(object["bandwidth_GBps"], source, bandwidth, false);
  if (object.contains("latency_us")) link.latency_us = positive_number(object["latency_us"], source, latency, true);
  return link;
}

json link_to_json(const LinkSpec& link) {
  return {{"bandwidth_GBps", link.bandwidth_GBps}, {"latency_us", link.latency_us}};
}

}  // namespace

int ClusterSpec::nic_of_gpu(int gpu) const {
  const int local = gpu % gpus_per_node;
  return node_of_gpu(gpu) * nics() + local * nics() / gpus_per_node;
}

int ClusterSpec::gpu_of_device(int device) const {
  return device_to_gpu.empty() ? device : device_to_gpu[static_cast<std::size_t>(device)];
}

std::string ClusterSpec::label() const {
  if (!source.empty()) return source;
  return name.empty() ? std::string("cluster") : fmt::format("cluster '{}'", name);
}

void ClusterSpec::validate(std::string_view where, int devices) const {
  if (nodes < 1) fail(where, "nodes", std::to_string(nodes), "expected an integer >= 1");
  if (gpus_per_node < 1) fail(where, "gpus_per_node", std::to_string(gpus_per_node), "expected an integer >= 1");
  if (!std::isfinite(gpu_tflops) || gpu_tflops <= 0) fail(where, "gpu_tflops", fmt::format("{}", gpu_tflops), "expected a number > 0");
  if (!(intra_node.bandwidth_GBps > 0) || !std::isfinite(intra_node.bandwidth_GBps)) {
    fail(where, "intra_node.bandwidth_GBps", fmt::format("{}", intra_node.bandwidth_GBps), "expected a number > 0");
  }
  if (nodes > 1 && (!(inter_node.bandwidth_GBps > 0) || !std::isfinite(inter_node.bandwidth_GBps))) {
    fail(where, "inter_node.bandwidth_GBps", fmt::format("{}", inter_node.bandwidth_GBps),
         "expected a number > 0 (needed with more than one node)");
  }
  if (nics_per_node < 0 || nics_per_node > gpus_per_node) {
    fail(where, "inter_node.nics_per_node", std::to_string(nics_per_node),
         fmt::format("expected 1..gpus_per_node ({})", gpus_per_node));
  }
  std::vector<bool> used(static_cast<std::size_t>(gpu_count()), false);
  for (std::size_t d = 0; d < device_to_gpu.size(); ++d) {
    const int gpu = device_to_gpu[d];
    const std::string field = fmt::format("device_to_gpu[{}]", d);
    if (gpu < 0 || gpu >= gpu_count()) {
      fail(where, field, std::to_string(gpu), fmt::format("expected a GPU index 0..{}", gpu_count() - 1));
    }
    if (used[static_cast<std::size_t>(gpu)]) fail(where, field, std::to_string(gpu), "GPU already holds another device");
    used[static_cast<std::size_t>(gpu)] = true;
  }
  if (devices > 0) {
    if (devices > gpu_count()) {
      throw InputError(fmt::format("{}: the problem has p={} devices but the cluster has {} GPUs ({} nodes x {})",
                                   where, devices, gpu_count(), nodes, gpus_per_node));
    }
    if (!device_to_gpu.empty() && static_cast<int>(device_to_gpu.size()) < devices) {
      throw InputError(fmt::format("{}: field 'device_to_gpu' maps {} devices but the problem has p={}", where,
                                   device_to_gpu.size(), devices));
    }
  }
}

ClusterSpec cluster_from_json(const json& object, std::string_view source) {
  check_fields(object, source, "",
               {"name", "nodes", "gpus_per_node", "gpu_tflops", "intra_node", "inter_node", "device_to_gpu"});
  ClusterSpec cluster;
  if (object.contains("name")) {
    if (!object["name"].is_string()) fail(source, "name", object["name"].dump(), "expected a string");
    cluster.name = object["name"].get<std::string>();
  }
  for (const char* field : {"nodes", "gpus_per_node", "gpu_tflops", "intra_node"}) {
    if (!object.contains(field)) throw InputError(fmt::format("{}: missing field '{}'", source, field));
  }
  cluster.nodes = positive_int(object["nodes"], source, "nodes");
  cluster.gpus_per_node = positive_int(object["gpus_per_node"], source, "gpus_per_node");
  cluster.gpu_tflops = positive_number(object["gpu_tflops"], source, "gpu_tflops", false);
  cluster.intra_node = link_from_json(object["intra_node"], source, "intra_node", {"bandwidth_GBps", "latency_us"});
  if (object.contains("inter_node")) {
    const json& inter = object["inter_node"];
    cluster.inter_node = link_from_json(inter, source, "inter_node", {"bandwidth_GBps", "latency_us", "nics_per_node"});
    if (inter.contains("nics_per_node")) {
      cluster.nics_per_node = positive_int(inter["nics_per_node"], source, "inter_node.nics_per_node");
    }
  } else if (cluster.nodes > 1) {
    throw InputError(fmt::format("{}: missing field 'inter_node' (needed with nodes = {})", source, cluster.nodes));
  }
  if (object.contains("device_to_gpu")) {
    const json& mapping = object["device_to_gpu"];
    if (mapping.is_string()) {
      if (mapping.get<std::string>() != "consecutive") {
        fail(source, "device_to_gpu", mapping.dump(), "expected \"consecutive\" or an array of GPU indices");
      }
    } else if (mapping.is_array()) {
      for (std::size_t d = 0; d < mapping.size(); ++d) {
        if (!mapping[d].is_number_integer() || mapping[d].get<long long>() < 0 ||
            mapping[d].get<double>() > 1e9) {  // checked before the narrowing to int
          fail(source, fmt::format("device_to_gpu[{}]", d), mapping[d].dump(), "expected a GPU index");
        }
        cluster.device_to_gpu.push_back(mapping[d].get<int>());
      }
    } else {
      fail(source, "device_to_gpu", mapping.dump(), "expected \"consecutive\" or an array of GPU indices");
    }
  }
  cluster.validate(source);
  return cluster;
}

json to_json(const ClusterSpec& cluster) {
  json object = {{"name", cluster.name},
                 {"nodes", cluster.nodes},
                 {"gpus_per_node", cluster.gpus_per_node},
                 {"gpu_tflops", cluster.gpu_tflops},
                 {"intra_node", link_to_json(cluster.intra_node)}};
  if (cluster.nodes > 1 || cluster.inter_node.bandwidth_GBps > 0) {
    object["inter_node"] = link_to_json(cluster.inter_node);
    object["inter_node"]["nics_per_node"] = cluster.nics();
  }
  if (cluster.device_to_gpu.empty()) {
    object["device_to_gpu"] = "consecutive";
  } else {
    object["device_to_gpu"] = cluster.device_to_gpu;
  }
  return object;
}

ClusterSpec load_cluster_file(const std::string& path) {
  ClusterSpec cluster = cluster_from_json(parse_json(read_file_kept(path), path), path);
  cluster.source = path;
  return cluster;
}

}  // namespace zb
