// The optimizer update at memory bandwidth and the data-parallel gradient all-reduce.
#include "models/optimizer_cost.h"

#include <fmt/format.h>

#include "models/setup_error.h"

namespace zb::models {

double optimizer_update_ms(double state_GB, const HardwareSpec& hardware) {
  if (hardware.memory_bandwidth_GBps <= 0) return 0;
  return 2 * state_GB / hardware.memory_bandwidth_GBps * 1e3;
}

double ring_all_reduce_ms(double bytes, int replicas, const Link& link) {
  if (replicas <= 1) return 0;
  const int steps = 2 * (replicas - 1);
  return steps * link.transfer_ms(bytes / replicas);
}

namespace {

int gpu_of_replica(const Interconnect& interconnect, int device, int devices, int replica) {
  return replica * devices + interconnect.gpu_of_device(device);
}

}  // namespace

void check_replicas(const Interconnect& interconnect, int devices, int replicas, std::string_view source) {
  if (replicas <= 1 || interconnect.nodes == 0) return;
  const int gpus = interconnect.nodes * interconnect.gpus_per_node;
  for (int d = 0; d < devices; ++d) {
    if (gpu_of_replica(interconnect, d, devices, replicas - 1) >= gpus) {
      throw SetupInfeasible(fmt::format("{}: cluster '{}' has {} GPUs, dp = {} pipelines of p = {} need {}", source,
                                        interconnect.name, gpus, replicas, devices, replicas * devices));
    }
  }
}

const Link& data_parallel_link(const Interconnect& interconnect, int device, int devices, int replicas) {
  const int first = gpu_of_replica(interconnect, device, devices, 0) / interconnect.gpus_per_node;
  const int last = gpu_of_replica(interconnect, device, devices, replicas - 1) / interconnect.gpus_per_node;
  return first == last ? interconnect.intra_node : interconnect.inter_node;
}

}  // namespace zb::models
