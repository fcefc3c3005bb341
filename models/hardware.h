// A GPU (and its node's links) as data: peak bf16 speed, memory, NVLink and NIC.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <string>
#include <string_view>

namespace zb::models {

// One direction of a link: a transfer of n bytes takes latency + n / bandwidth.
struct Link {
  double bandwidth_GBps = 0;  // 1e9 bytes per second
  double latency_us = 0;

  double transfer_ms(double bytes) const { return latency_us * 1e-3 + bytes / (bandwidth_GBps * 1e9) * 1e3; }
};

struct HardwareSpec {
  std::string name;
  double peak_tflops_bf16 = 0;  // dense
  double memory_GB = 0;         // 1e9 bytes
  double reserved_GB = 0;       // kept free: CUDA context, communication buffers, fragmentation
  double memory_bandwidth_GBps = 0;  // device memory (HBM), datasheet; 0: unknown (no t_opt derived)
  int gpus_per_node = 8;
  Link nvlink;                  // GPU to GPU inside a node, per direction
  Link nic;                     // GPU to GPU across nodes, per direction
};

// Reads a hardware preset; "nic" is a network preset name, a path or an object
// ({"bandwidth_GBps", "latency_us"}) resolved against base_dir. Errors name `source`.
HardwareSpec hardware_from_json(const nlohmann::json& object, std::string_view source,
                                const std::filesystem::path& base_dir);

// Reads a network preset {"name", "bandwidth_GBps", "latency_us"}.
Link link_from_json(const nlohmann::json& object, std::string_view source);

}  // namespace zb::models
