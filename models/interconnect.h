// Which link a transfer between two pipeline devices crosses: NVLink inside a node, NICs across.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

#include "models/hardware.h"

namespace zb::models {

struct Interconnect {
  std::string name;
  int nodes = 0;  // 0: as many as the devices need (from a hardware preset)
  int gpus_per_node = 1;
  Link intra_node;
  Link inter_node;
  std::vector<int> device_to_gpu;  // empty: device d on GPU d * gpus_per_device
  // GPUs behind one pipeline device (tensor x data parallel degree, the pipeline outermost as in
  // Megatron's and torchtitan's default order): device d's first GPU is d * gpus_per_device.
  int gpus_per_device = 1;

  int gpu_of_device(int device) const;
  // The link between two devices' GPUs.
  const Link& link_between(int device_a, int device_b) const;
  // Throws SetupInfeasible when the cluster has fewer GPUs than `devices` x gpus_per_device (or
  // the mapping does not cover them).
  void check_devices(int devices, std::string_view source) const;
};

// From a cluster preset of models/clusters/ (the SimGrid engine's format: nodes, gpus_per_node,
// intra_node and inter_node {bandwidth_GBps, latency_us}, device_to_gpu). Fields the cost model
// does not use (gpu_tflops, nics_per_node) are accepted and ignored here: the evaluator has no
// link contention, the SimGrid engine models it.
Interconnect interconnect_from_cluster(const nlohmann::json& object, std::string_view source);

// Nodes of hardware.gpus_per_node GPUs joined by NVLink, nodes joined by the hardware's NICs.
Interconnect interconnect_from_hardware(const HardwareSpec& hardware);

}  // namespace zb::models
