// The SimGrid engine: runs a schedule on a simulated cluster (or the idealised network) in a child process.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/simgrid/cluster.h"
#include "sim/core/optimizer_step.h"
#include "sim/core/problem.h"
#include "sim/core/schedule.h"
#include "sim/core/trace.h"

namespace zb {

struct SimgridOptions {
  // The platform; std::nullopt is the idealised network: one host per device running at
  // 1 flop per time unit, a fat-pipe link per device pair whose latency is the problem's t_comm
  // and whose bandwidth is unlimited, so the evaluator's times are reproduced exactly.
  std::optional<ClusterSpec> cluster;
  // Consecutive training steps and the optimizer step between them (optimizer_step.h; each
  // device's update takes the problem's t_opt): the evaluator's EvalOptions, simulated.
  int steps = 1;
  OptimizerStep optimizer{};
  // Size of a grad-norm partial / verdict message of the all-reduce.
  double grad_norm_bytes = kGradNormBytes;
  // Cluster only: each device sends to each peer through one in-order stream (like NCCL
  // send kernels on one CUDA stream: a message starts when the previous one to that peer has
  // arrived), while streams to different peers run concurrently and share links. false: every
  // message starts when produced and all in-flight messages share bandwidth fairly. (The ideal
  // network always starts messages when produced: with unlimited bandwidth a message occupies
  // no stream time, exactly as in the evaluator.)
  bool fifo_sends = true;
  // SimGrid's own log messages on stderr (silenced otherwise).
  bool verbose = false;
};

// The first step's optimizer step (docs/design.md section 7), in the problem's time unit from
// t = 0: the all-reduce of optimizer_step.h as real messages (the ideal network: t_reduce_hop a
// hop; a cluster: its links, shared with the activations), each device's update on its host.
struct StepTimes {
  std::vector<double> gradients_ready;  // per device: end of its last action
  std::vector<double> verdict;          // per device: when the reduced grad norm arrived
  std::vector<double> ready;            // per device: when its update was final (its next step may start)
};

struct SimgridResult {
  Trace trace;  // engine "simgrid": compute, send and recv spans of every step, memory, metrics, step_ends
  StepTimes step;
  double engine_cpu_seconds = 0;  // CPU time the child spent in SimGrid (build + run)
  double sim_activities = 0;      // executions and communications SimGrid ran
};

// Simulates options.steps training steps. Throws ScheduleError for a schedule over the memory limit
// (before running), for actions outside the problem, and for a deadlock (naming the stuck
// devices and what each waits for); InputError for a cluster that cannot hold the problem;
// Error when the simulation process fails. Never prints unless options.verbose.
SimgridResult run_simgrid(const Problem& problem, const Schedule& schedule, const SimgridOptions& options = {});

// run_simgrid's trace only.
Trace simulate_simgrid(const Problem& problem, const Schedule& schedule, const SimgridOptions& options = {});

}  // namespace zb
