// Platform construction: the idealised network (fat pipes with latency t_comm) or a cluster.
#include "sim/simgrid/detail/platform.h"

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include <cmath>
#include <map>
#include <set>
#include <utility>

#include "sim/support/error.h"
#include "sim/core/optimizer_step.h"

namespace zb::engine {

namespace sg4 = simgrid::s4u;

namespace {

// "Unlimited" bandwidth for the ideal network: a 1-byte message adds 1e-18 s to its latency.
// (A message must carry at least one byte: SimGrid treats a 0-byte eager message as already
// delivered during its latency phase.)
constexpr double kIdealBandwidth = 1e18;

using DevicePair = std::pair<int, int>;

// Ordered device pairs of the optimizer step's all-reduce (optimizer_step.h).
std::set<DevicePair> control_pairs(const Problem& problem) {
  const std::vector<DevicePair> hops = all_reduce_hops(problem);
  return {hops.begin(), hops.end()};
}

// Ordered device pairs that exchange messages: the plan's channels plus the all-reduce's.
std::set<DevicePair> needed_pairs(const Problem& problem, const EnginePlan& plan) {
  std::set<DevicePair> pairs = control_pairs(problem);
  for (const Channel& channel : plan.channels) pairs.insert({channel.producer, channel.consumer});
  return pairs;
}

Platform build_ideal(const Problem& problem, const EnginePlan& plan, sg4::NetZone* zone) {
  Platform platform;
  for (int d = 0; d < problem.devices; ++d) platform.hosts.push_back(zone->create_host(fmt::format("d{}", d), 1.0));
  // One latency per ordered pair, taken from the channels that cross it.
  std::map<DevicePair, const Channel*> latency_of;
  for (const Channel& channel : plan.channels) {
    const DevicePair pair{channel.producer, channel.consumer};
    auto [it, inserted] = latency_of.emplace(pair, &channel);
    if (!inserted && it->second->t_comm != channel.t_comm) {
      throw InputError(fmt::format(
          "ideal network: boundaries {}->{} (t_comm {}) and {}->{} (t_comm {}) both carry messages from d{} to d{}; "
          "SimGrid routes have one latency per device pair: give them the same t_comm or use the evaluator",
          it->second->boundary, it->second->boundary + 1, it->second->t_comm, channel.boundary, channel.boundary + 1,
          channel.t_comm, pair.first, pair.second));
    }
  }
  auto connect = [&](const std::vector<sg4::Host*>& hosts, const DevicePair& pair, double latency, const char* kind) {
    sg4::Link* link = zone->create_link(fmt::format("{}{}-{}", kind, pair.first, pair.second), kIdealBandwidth)
                          ->set_latency(latency)
                          ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
    link->seal();
    zone->add_route(hosts[static_cast<std::size_t>(pair.first)]->get_netpoint(),
                    hosts[static_cast<std::size_t>(pair.second)]->get_netpoint(), nullptr, nullptr,
                    {sg4::LinkInRoute(link)}, false);
  };
  for (const auto& [pair, channel] : latency_of) connect(platform.hosts, pair, channel->t_comm, "d");
  // The all-reduce's messages take t_reduce_hop, on hosts of their own (one route per host pair).
  for (int d = 0; d < problem.devices; ++d) {
    platform.control_hosts.push_back(zone->create_host(fmt::format("c{}", d), 1.0));
  }
  for (const DevicePair& pair : control_pairs(problem)) connect(platform.control_hosts, pair, problem.t_reduce_hop, "c");
  return platform;
}

Platform build_cluster(const Problem& problem, const EnginePlan& plan, const ClusterSpec& cluster,
                       sg4::NetZone* zone) {
  cluster.validate(cluster.label(), problem.devices);
  Platform platform;
  platform.seconds_per_unit = seconds_per(problem.time_unit);
  const double speed = cluster.gpu_tflops * 1e12;
  platform.flops_per_unit = speed * platform.seconds_per_unit;
  std::map<int, sg4::SplitDuplexLink*> ports;  // per GPU: its intra-node link to the node's switch
  std::map<int, sg4::SplitDuplexLink*> nics;   // per NIC
  for (int d = 0; d < problem.devices; ++d) {
    const int gpu = cluster.gpu_of_device(d);
    platform.hosts.push_back(zone->create_host(fmt::format("gpu{}", gpu), speed));
  }
  // Latencies are end to end, so each of the two links on a route carries half.
  auto port_of = [&](int gpu) {
    auto& link = ports[gpu];
    if (link == nullptr) {
      link = zone->create_split_duplex_link(fmt::format("gpu{}-port", gpu), cluster.intra_node.bandwidth_GBps * 1e9);
      link->set_latency(cluster.intra_node.latency_us * 1e-6 / 2);
      link->seal();
    }
    return link;
  };
  auto nic_of = [&](int gpu) {
    const int nic = cluster.nic_of_gpu(gpu);
    auto& link = nics[nic];
    if (link == nullptr) {
      link = zone->create_split_duplex_link(fmt::format("nic{}", nic), cluster.inter_node.bandwidth_GBps * 1e9);
      link->set_latency(cluster.inter_node.latency_us * 1e-6 / 2);
      link->seal();
    }
    return link;
  };
  using Direction = sg4::LinkInRoute::Direction;
  for (const DevicePair& pair : needed_pairs(problem, plan)) {
    const int from = cluster.gpu_of_device(pair.first);
    const int to = cluster.gpu_of_device(pair.second);
    const bool same_node = cluster.node_of_gpu(from) == cluster.node_of_gpu(to);
    sg4::Link* out = same_node ? port_of(from) : nic_of(from);
    sg4::Link* in = same_node ? port_of(to) : nic_of(to);
    // Split-duplex: the sender's link going up, the receiver's coming down.
    const std::vector<sg4::LinkInRoute> route{sg4::LinkInRoute(out, Direction::UP), sg4::LinkInRoute(in, Direction::DOWN)};
    zone->add_route(platform.hosts[static_cast<std::size_t>(pair.first)]->get_netpoint(),
                    platform.hosts[static_cast<std::size_t>(pair.second)]->get_netpoint(), nullptr, nullptr, route,
                    false);
  }
  platform.activation_bytes = static_cast<std::uint64_t>(std::max(1.0, std::round(problem.bytes_act)));
  platform.control_hosts = platform.hosts;
  return platform;
}

}  // namespace

Platform build_platform(const Problem& problem, const EnginePlan& plan, const std::optional<ClusterSpec>& cluster,
                        double grad_norm_bytes) {
  // Exact transfer times: no latency or bandwidth correction factors, no reverse-path load, no
  // TCP window cap (docs/design.md section 12: the defaults multiply latency by 13.01 and bandwidth by 0.97).
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:0");
  sg4::NetZone* zone = sg4::create_full_zone("pipeline");
  Platform platform = cluster ? build_cluster(problem, plan, *cluster, zone) : build_ideal(problem, plan, zone);
  platform.grad_norm_bytes = static_cast<std::uint64_t>(std::max(1.0, std::round(grad_norm_bytes)));
  zone->seal();
  return platform;
}

}  // namespace zb::engine
