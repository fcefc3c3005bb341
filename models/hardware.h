// A GPU (and its node's links) as data: peak bf16 speed, HBM bandwidth, SMs, memory, NVLink and NIC.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <filesystem>
#include <string>
#include <string_view>

#include "models/presets.h"

namespace zb::models {

// One direction of a link: a transfer of n bytes takes latency + n / bandwidth.
struct Link {
  double bandwidth_GBps = 0;  // 1e9 bytes per second
  double latency_us = 0;

  double transfer_ms(double bytes) const { return latency_us * 1e-3 + bytes / (bandwidth_GBps * 1e9) * 1e3; }
};

// The share of a datasheet peak that a tuned library kernel sustains on a large, perfectly tiled
// problem (main-loop prologue and epilogue, clocks under a sustained load). Not on any datasheet:
// an assumption stated once here, the same for every GPU, never fitted to a throughput table; a
// preset or a scenario may override it (`gemm_sustained_fraction`, `memory_sustained_fraction`).
// What the shape of a GEMM costs on top (tile and wave quantisation) is models/detail/kernel_time.h.
inline constexpr double kGemmSustainedFraction = 0.8;
inline constexpr double kMemorySustainedFraction = 0.9;

struct HardwareSpec {
  std::string name;
  double peak_tflops_bf16 = 0;  // dense tensor-core peak (datasheet)
  double memory_bandwidth_GBps = 0;  // HBM, 1e9 bytes per second (datasheet)
  int sm_count = 1;                  // streaming multiprocessors (whitepaper): a GEMM wave's width
  double gemm_sustained_fraction = kGemmSustainedFraction;
  double memory_sustained_fraction = kMemorySustainedFraction;
  double memory_GB = 0;         // 1e9 bytes
  double reserved_GB = 0;       // kept free: CUDA context, communication buffers, fragmentation
  int gpus_per_node = 8;
  Link nvlink;                  // GPU to GPU inside a node, per direction
  Link nic;                     // GPU to GPU across nodes, per direction
};

// Reads a hardware preset; "nic" is a network preset name, a path or an object
// ({"bandwidth_GBps", "latency_us"}) resolved against base_dir and read with `read`. Errors name
// `source`.
HardwareSpec hardware_from_json(const nlohmann::json& object, std::string_view source,
                                const std::filesystem::path& base_dir, const ReadJsonFile& read);

// Reads a network preset {"name", "bandwidth_GBps", "latency_us"}.
Link link_from_json(const nlohmann::json& object, std::string_view source);

}  // namespace zb::models
