// Cluster descriptions for the SimGrid engine: nodes, GPUs, links, and which GPU runs each device.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace zb {

// One kind of link: every GPU port (intra-node) or NIC (inter-node) is a full-duplex link of this
// bandwidth, so activations and gradients going in opposite directions never share bandwidth.
struct LinkSpec {
  double bandwidth_GBps = 0;  // 1e9 bytes per second, each direction
  double latency_us = 0;      // end to end, from one GPU to another
};

// GPUs are numbered node by node: gpu = node * gpus_per_node + local index. A transfer inside a
// node crosses the two GPUs' intra-node ports; across nodes it crosses the two NICs (a
// non-blocking fabric in between). GPUs of a node share its NICs evenly, so with fewer NICs than
// GPUs, stages on one node contend for the network.
struct ClusterSpec {
  std::string name;
  std::string source;  // the file it was read from (for messages); not part of the JSON
  int nodes = 1;
  int gpus_per_node = 1;
  double gpu_tflops = 0;  // effective speed: a pass of t seconds is t * gpu_tflops * 1e12 flops
  LinkSpec intra_node;
  LinkSpec inter_node;
  int nics_per_node = 0;           // 0: one NIC per GPU
  std::vector<int> device_to_gpu;  // empty: consecutive (device d on GPU d)

  int gpu_count() const { return nodes * gpus_per_node; }
  int node_of_gpu(int gpu) const { return gpu / gpus_per_node; }
  int nics() const { return nics_per_node > 0 ? nics_per_node : gpus_per_node; }
  // Global NIC index of a GPU.
  int nic_of_gpu(int gpu) const;
  int gpu_of_device(int device) const;

  // Throws InputError naming `source`, the field and the value for anything inconsistent; with
  // devices > 0 also checks that the mapping places that many devices on distinct GPUs.
  void validate(std::string_view where, int devices = 0) const;
  // How messages name this cluster: its file, else its name.
  std::string label() const;
};

// Reads a cluster object (unknown fields are errors); throws InputError naming source and field.
ClusterSpec cluster_from_json(const nlohmann::json& object, std::string_view source);
nlohmann::json to_json(const ClusterSpec& cluster);
// Reads and validates a cluster file; errors name the path.
ClusterSpec load_cluster_file(const std::string& path);

}  // namespace zb
