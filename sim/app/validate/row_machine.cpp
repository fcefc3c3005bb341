// A measured row's GPU and cluster, from presets: NVLink from the GPU's hardware preset, the NICs
// from a network preset, so that every number has one owner in models/.
#include "sim/app/validate/row_machine.h"

#include <fmt/format.h>

#include <array>
#include <regex>

#include "models/presets.h"
#include "sim/app/catalog/preset_files.h"
#include "sim/app/validate/detail/row_cells.h"
#include "sim/support/error.h"

namespace zb::validate {

namespace {

struct GpuName {
  std::string_view column;  // the measured table's name
  std::string_view preset;  // models/hardware/
};
constexpr std::array<GpuName, 4> kGpus = {{
    {"h100-sxm-80gb", "h100-sxm"},
    {"h100-96gb-500w", "h100-96gb-500w"},
    {"a100-80gb-sxm", "a100-80gb"},
    {"h200-141gb", "h200"},
}};

// The interconnect classes of tests/data/measured/README.md: the NIC's network preset and how many
// NICs a node has (the NVLink side is the GPU's own).
struct LinkClass {
  std::string_view name;
  std::string_view network;  // models/network/
  int nics_per_node;
};
constexpr std::array<LinkClass, 4> kLinkClasses = {{
    {"nvlink4+ib-ndr-400x8", "ib-ndr-400g", 8},  // DGX H100: 8 ConnectX-7 NDR NICs
    {"nvlink4+rdma-400x8", "ib-ndr-400g", 8},    // Grand Teton: 400 Gb/s RDMA per GPU (the same rate)
    {"nvlink3+ib-hdr-200x8", "ib-hdr-200g", 8},  // DGX A100 (Selene): 8 HDR NICs for compute
    {"nvlink3+omnipath-100x4", "omnipath-100g", 4},  // Jean Zay A100 nodes: 4 Omni-Path NICs
}};

nlohmann::json preset(std::string_view kind, std::string_view name) {
  return models::resolve_preset(kind, std::string(name), {}, fmt::format("{} preset", kind), catalog::read_preset_file)
      .object;
}

nlohmann::json link(const nlohmann::json& object) {
  return {{"bandwidth_GBps", object.at("bandwidth_GBps")}, {"latency_us", object.at("latency_us")}};
}

}  // namespace

RowMachine row_machine(const MeasuredRow& row) {
  RowMachine machine;
  const std::string& gpu = row.cell("gpu");
  const auto known_gpu = std::find_if(kGpus.begin(), kGpus.end(), [&](const GpuName& g) { return g.column == gpu; });
  if (known_gpu == kGpus.end()) {
    machine.uncovered = fmt::format("no hardware preset for GPU '{}'", excerpt(gpu));
    return machine;
  }
  machine.hardware = known_gpu->preset;
  const std::string& interconnect = row.cell("interconnect");
  const auto known_link = std::find_if(kLinkClasses.begin(), kLinkClasses.end(),
                                       [&](const LinkClass& c) { return c.name == interconnect; });
  if (known_link == kLinkClasses.end()) {
    machine.uncovered = fmt::format("no interconnect class '{}'", excerpt(interconnect));
    return machine;
  }
  static const std::regex shape(R"((\d+)x(\d+))");
  std::smatch match;
  const std::string& nodes_text = row.cell("nodes_gpus_per_node");
  if (!std::regex_match(nodes_text, match, shape)) {
    machine.uncovered = fmt::format("nodes_gpus_per_node '{}' is not NODESxGPUS", excerpt(nodes_text));
    return machine;
  }
  const int nodes = std::stoi(match[1].str());
  const int per_node = std::stoi(match[2].str());
  const nlohmann::json hardware = preset("hardware", machine.hardware);
  machine.hardware_object = hardware;
  machine.architecture = hardware.value("architecture", "");
  const nlohmann::json network = preset("network", known_link->network);
  // The evaluator has no link contention (models/interconnect.h): with fewer NICs than GPUs, every
  // GPU gets its share of the node's NICs, as it does when all of them cross at once (the
  // data-parallel rings, a tensor-parallel group's pipeline transfers).
  nlohmann::json inter = link(network);
  const int nics = std::min(known_link->nics_per_node, per_node);
  inter["bandwidth_GBps"] = inter["bandwidth_GBps"].get<double>() * nics / per_node;
  inter["nics_per_node"] = per_node;
  machine.cluster = {{"name", fmt::format("{} x {} {} GPUs, {}", nodes, per_node, gpu, interconnect)},
                     {"nodes", nodes},
                     {"gpus_per_node", per_node},
                     {"gpu_tflops", hardware.at("peak_tflops_bf16")},
                     {"intra_node", link(hardware.at("nvlink"))},
                     {"inter_node", inter},
                     {"device_to_gpu", "consecutive"}};
  return machine;
}

}  // namespace zb::validate
