// The optimizer update at memory bandwidth and the data-parallel gradient all-reduce.
#include "models/detail/optimizer_cost.h"

namespace zb::models {

double optimizer_update_ms(double state_GB, const HardwareSpec& hardware) {
  if (hardware.memory_bandwidth_GBps <= 0) return 0;
  return 2 * state_GB / hardware.memory_bandwidth_GBps * 1e3;
}

namespace {

// Megatron's order (models/interconnect.h): a device's t x d GPUs are contiguous, tensor-parallel
// innermost, so replica r of device d is r * t GPUs after the device's first.
int gpu_of_replica(const Interconnect& interconnect, int device, int replicas, int replica) {
  return interconnect.gpu_of_device(device) + replica * (interconnect.gpus_per_device / replicas);
}

}  // namespace

const Link& data_parallel_link(const Interconnect& interconnect, int device, int replicas) {
  const int first = gpu_of_replica(interconnect, device, replicas, 0) / interconnect.gpus_per_node;
  const int last = gpu_of_replica(interconnect, device, replicas, replicas - 1) / interconnect.gpus_per_node;
  return first == last ? interconnect.intra_node : interconnect.inter_node;
}

}  // namespace zb::models
