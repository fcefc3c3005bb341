// The simulated platform built in code with S4U: one host per device, links and routes.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "sim/simgrid/cluster.h"
#include "sim/simgrid/detail/engine_plan.h"
#include "sim/core/problem.h"

namespace simgrid::s4u {
class Host;
}

namespace zb::engine {

struct Platform {
  std::vector<simgrid::s4u::Host*> hosts;  // per device
  // Per device: where its optimizer-step messages (the norm all-reduce) start and end. The ideal
  // network gives them hosts of their own, linked with latency t_reduce_hop; on a cluster they
  // are the GPUs, and the messages share the links with the activations.
  std::vector<simgrid::s4u::Host*> control_hosts;
  double seconds_per_unit = 1;             // simulated seconds per problem time unit
  double flops_per_unit = 1;               // flops of one time unit of work on a device
  std::uint64_t activation_bytes = 1;      // simulated size of an activation or gradient message
  std::uint64_t grad_norm_bytes = 1;       // simulated size of an optimizer-step message
};

// Sets the network model (CM02, no cross-traffic, no TCP-gamma: transfers take latency +
// bytes / bandwidth exactly) and builds the hosts, links and routes that the plan's channels and
// the optimizer step's all-reduce (optimizer_step.h: stage s+1 -> s, stage 0 -> every device) need. Must run after the Engine is created
// and before any actor. The ideal network (no cluster) needs one t_comm per device pair: throws
// InputError naming two boundaries that cross the same pair with different t_comm. In cluster
// mode throws InputError for a cluster too small.
Platform build_platform(const Problem& problem, const EnginePlan& plan, const std::optional<ClusterSpec>& cluster,
                        double grad_norm_bytes);

}  // namespace zb::engine
