// Finite bandwidth: transfers take latency + bytes / bandwidth, and share links (closed forms).
#include <gtest/gtest.h>

#include "tests/simgrid/engine_test_support.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/schedule.h"
#include "sim/simgrid/simgrid_engine.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

// n nodes of one GPU each: every boundary crosses the network.
ClusterSpec network_of(int nodes, double bandwidth_GBps, double latency_us) {
  ClusterSpec cluster;
  cluster.name = "test";
  cluster.nodes = nodes;
  cluster.gpus_per_node = 1;
  cluster.gpu_tflops = 100;
  cluster.intra_node = {1000, 0};
  cluster.inter_node = {bandwidth_GBps, latency_us};
  return cluster;
}

const Span& find(const Trace& trace, int device, Stream stream, Pass pass, int microbatch) {
  for (const Span& span : trace.spans) {
    if (span.device == device && span.stream == stream && span.pass == pass && span.microbatch == microbatch) {
      return span;
    }
  }
  throw std::runtime_error("span not found");
}

// One transfer alone: arrival = send + latency + bytes / bandwidth, in the problem's unit (ms).
TEST(SimgridCluster, ATransferTakesLatencyPlusBytesOverBandwidth) {
  ProblemSpec spec = testing::uniform_spec(2, 1, 2.0, 3.0, 1.0, 123.0);  // ignored on a cluster: the network decides
  spec.bytes_act = 50e6;  // 50 MB at 10 GB/s: 5 ms
  const Problem problem = spec.build();
  SimgridOptions options;
  options.cluster = network_of(2, 10, 100);  // + 0.1 ms latency
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "zb-h1", problem);
  const Trace trace = simulate_simgrid(problem, schedule, options);
  const double transfer = 0.1 + 5.0;
  const Span& f1 = find(trace, 1, Stream::compute, Pass::F, 0);
  EXPECT_NEAR(f1.start, 2.0 + transfer, 1e-9);
  const Span& recv = find(trace, 1, Stream::recv, Pass::F, 0);
  EXPECT_NEAR(recv.start, 2.0, 1e-9);
  EXPECT_NEAR(recv.end, 2.0 + transfer, 1e-9);
  // The gradient goes back the same way after d1's F and B; d1's all-reduce partial (8 bytes,
  // sent after its W while the gradient is still on the link) shares the link for 8e-7 ms.
  const Span& b0 = find(trace, 0, Stream::compute, Pass::B, 0);
  EXPECT_NEAR(b0.start, 2.0 + transfer + 2.0 + 3.0 + transfer, 1e-6);
  // The evaluator with t_comm equal to that transfer time agrees (the all-reduce apart).
  spec.t_comm = {transfer};
  const Problem same = spec.build();
  Trace activations = trace;
  activations.step_ends.clear();
  Trace expected = evaluate(same, schedule);
  expected.step_ends.clear();
  EXPECT_TRUE(testing::same_trace(expected, activations, 1e-7));
}

// Two transfers on one link at once share its bandwidth: each takes twice as long. d0's two
// forwards take eps each, so the messages leave eps apart; with D = bytes / bandwidth:
// the first arrives at L + 2D, the second at L + 2D + eps (alone they would take L + D).
// (fifo_sends = false: both messages start when produced.)
TEST(SimgridCluster, TwoTransfersSharingALinkTakeTwiceAsLong) {
  const double eps = 0.001;
  ProblemSpec spec;
  spec.devices = 2;
  spec.microbatches = 2;
  spec.t_f = {eps, 1.0};
  spec.t_b = {1.0, 1.0};
  spec.t_w = {1.0, 1.0};
  spec.bytes_act = 100e6;  // D = 10 ms at 10 GB/s
  const Problem problem = spec.build();
  SimgridOptions options;
  options.cluster = network_of(2, 10, 0);
  options.fifo_sends = false;
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "gpipe", problem);
  const Trace trace = simulate_simgrid(problem, schedule, options);
  EXPECT_NEAR(find(trace, 1, Stream::recv, Pass::F, 0).end, 20.0, 1e-9);
  EXPECT_NEAR(find(trace, 1, Stream::recv, Pass::F, 1).end, 20.0 + eps, 1e-9);
  EXPECT_NEAR(find(trace, 1, Stream::compute, Pass::F, 0).start, 20.0, 1e-9);
  EXPECT_NEAR(find(trace, 1, Stream::compute, Pass::F, 1).start, 21.0, 1e-9);

  // With one microbatch the same transfer alone takes D.
  spec.microbatches = 1;
  const Problem alone = spec.build();
  const Trace single = simulate_simgrid(alone, generate(GeneratorRegistry::with_builtins(), "gpipe", alone), options);
  EXPECT_NEAR(find(single, 1, Stream::recv, Pass::F, 0).end, eps + 10.0, 1e-9);
}

// The default send stream per peer is in order: the second message waits for the first, so
// they arrive at eps + L + D and eps + 2(L + D) (a stream runs one send at a time, latency included).
TEST(SimgridCluster, MessagesToOnePeerGoInOrderOneAtATime) {
  const double eps = 0.001;
  ProblemSpec spec;
  spec.devices = 2;
  spec.microbatches = 3;
  spec.t_f = {eps, 1.0};
  spec.t_b = {1.0, 1.0};
  spec.t_w = {1.0, 1.0};
  spec.bytes_act = 100e6;  // D = 10 ms at 10 GB/s
  const Problem problem = spec.build();
  SimgridOptions options;
  options.cluster = network_of(2, 10, 500);  // L = 0.5 ms
  const Trace trace = simulate_simgrid(problem, generate(GeneratorRegistry::with_builtins(), "gpipe", problem), options);
  const double hop = 0.5 + 10.0;
  for (int mb = 0; mb < 3; ++mb) {
    const Span& recv = find(trace, 1, Stream::recv, Pass::F, mb);
    EXPECT_NEAR(recv.end, eps + (mb + 1) * hop, 1e-9) << mb;
    // The span starts when the stream takes the message, not when it was produced.
    EXPECT_NEAR(recv.start, mb == 0 ? eps : eps + mb * hop, 1e-9) << mb;
    EXPECT_NEAR(find(trace, 0, Stream::send, Pass::F, mb).end, recv.end, 1e-12);
  }
  EXPECT_NEAR(find(trace, 1, Stream::compute, Pass::F, 2).start, eps + 3 * hop, 1e-9);
}

// d0's activations going forward and d1's gradients coming back use opposite directions of the
// full-duplex links: sent at the same moment, each still takes bytes / bandwidth. (d1 is fast,
// so its B0 ends exactly when d0's F1 does, at t = 2.)
TEST(SimgridCluster, OppositeDirectionsDoNotShareBandwidth) {
  ProblemSpec spec;
  spec.devices = 2;
  spec.microbatches = 2;
  spec.t_f = {1.0, 0.1};
  spec.t_b = {1.0, 0.1};
  spec.t_w = {1.0, 0.1};
  spec.bytes_act = 8e6;  // 0.8 ms at 10 GB/s
  const Problem problem = spec.build();
  SimgridOptions options;
  options.cluster = network_of(2, 10, 0);
  const Trace trace = simulate_simgrid(problem, generate(GeneratorRegistry::with_builtins(), "zb-h1", problem), options);
  const Span& forward = find(trace, 0, Stream::send, Pass::F, 1);
  const Span& backward = find(trace, 1, Stream::send, Pass::B, 0);
  EXPECT_NEAR(forward.start, 2.0, 1e-9);
  EXPECT_NEAR(backward.start, 2.0, 1e-9);
  EXPECT_NEAR(forward.end, 2.8, 1e-9);
  EXPECT_NEAR(backward.end, 2.8, 1e-9);
}

// Two pipeline boundaries leaving one node through one shared NIC slow each other down;
// with a NIC per GPU they do not.
TEST(SimgridCluster, ASharedNicIsSlowerThanOnePerGpu) {
  ProblemSpec spec = testing::uniform_spec(4, 8, 1.0, 1.0, 1.0);
  spec.bytes_act = 20e6;  // 2 ms at 10 GB/s
  const Problem problem = spec.build();
  ClusterSpec cluster;
  cluster.nodes = 2;
  cluster.gpus_per_node = 2;
  cluster.gpu_tflops = 100;
  cluster.intra_node = {1000, 0};
  cluster.inter_node = {10, 0};
  cluster.device_to_gpu = {0, 2, 1, 3};  // every boundary crosses the network
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "zb-h1", problem);
  SimgridOptions own;
  own.cluster = cluster;
  SimgridOptions shared = own;
  shared.cluster->nics_per_node = 1;
  const double fast = simulate_simgrid(problem, schedule, own).metrics.makespan;
  const double slow = simulate_simgrid(problem, schedule, shared).metrics.makespan;
  // Contention only delays: never faster than the evaluator with t_comm = one transfer alone.
  spec.t_comm = {2.0};
  const double ideal = evaluate(spec.build(), schedule).metrics.makespan;
  EXPECT_GE(fast, ideal - 1e-9);
  EXPECT_GT(slow, fast + 1.0) << "ideal " << ideal;
}

// A multi-node cluster with a NIC per GPU and no queueing (every transfer shorter than the
// passes between two sends) is the evaluator with per-boundary t_comm = latency + bytes /
// bandwidth of the link each boundary crosses: NVLink inside a node, the network between nodes.
TEST(SimgridCluster, WithoutContentionAClusterIsTheEvaluatorWithPerBoundaryTransferTimes) {
  ClusterSpec cluster;
  cluster.nodes = 2;
  cluster.gpus_per_node = 4;
  cluster.gpu_tflops = 400;
  cluster.intra_node = {450, 3};
  cluster.inter_node = {25, 10};
  const double bytes = 16.8e6;
  ProblemSpec spec = testing::uniform_spec(8, 16, 1.0, 1.0, 0.8);
  spec.bytes_act = bytes;
  const Problem problem = spec.build();
  spec.t_comm.assign(8, 0.0);
  for (int s = 0; s < 8; ++s) {
    const bool crosses_nodes = s == 3;
    const LinkSpec& link = crosses_nodes ? cluster.inter_node : cluster.intra_node;
    spec.t_comm[static_cast<std::size_t>(s)] = link.latency_us * 1e-3 + bytes / (link.bandwidth_GBps * 1e9) * 1e3;
  }
  const Problem derived = spec.build();
  SimgridOptions options;
  options.cluster = cluster;
  for (const char* name : {"1f1b", "zb-h1", "zb-h2"}) {
    const Schedule schedule = generate(GeneratorRegistry::with_builtins(), name, problem);
    // The activations only: the all-reduce's hops have per-link latencies, which one
    // t_reduce_hop cannot state, and its 8-byte partials share a link with a gradient for
    // about 3e-7 ms.
    Trace expected = evaluate(derived, schedule);
    Trace simulated = simulate_simgrid(problem, schedule, options);
    expected.step_ends.clear();
    simulated.step_ends.clear();
    EXPECT_TRUE(testing::same_trace(expected, simulated, 1e-8)) << name;
  }
}

}  // namespace
}  // namespace zb
