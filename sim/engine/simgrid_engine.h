// The SimGrid engine: runs a schedule on a simulated cluster (or the idealised network) in a child process.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sim/engine/cluster.h"
#include "sim/schedule/problem.h"
#include "sim/schedule/schedule.h"
#include "sim/schedule/trace.h"

namespace zb {

struct SimgridOptions {
  // The platform; std::nullopt is the idealised network: one host per device running at
  // 1 flop per time unit, a fat-pipe link per device pair whose latency is the problem's t_comm
  // and whose bandwidth is unlimited, so the evaluator's times are reproduced exactly.
  std::optional<ClusterSpec> cluster;
  // Optimizer step, per device, in the problem's time unit (both step models add it).
  double optimizer_step_time = 0;
  // Size of the grad-norm partial / all-reduce message of the optimizer step models.
  double grad_norm_bytes = 8;
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

// One training step ended two ways (docs/design.md section 7), in the problem's time unit from t = 0.
// The grad-norm reduction travels along the pipeline: device 0 -> p-1 (each device adds its
// partial once its own gradients are ready), then the result back p-1 -> 0, as real messages.
struct StepTimes {
  // Synchronous: every device waits for the reduced grad norm, then runs its optimizer step.
  double barrier = 0;
  // Post-validation: every device steps as soon as its own gradients are ready; the same
  // reduction validates the step in the background.
  double post_validation = 0;
  // When the last device has learnt that the step was valid (the background check's end).
  double validation_end = 0;
  std::vector<double> gradients_ready;  // per device: end of its last action
  std::vector<double> check_received;   // per device: when the reduced grad norm arrived
};

struct SimgridResult {
  Trace trace;  // engine "simgrid": compute, send and recv spans, memory timeline, metrics
  StepTimes step;
  double engine_cpu_seconds = 0;  // CPU time the child spent in SimGrid (build + run)
  double sim_activities = 0;      // executions and communications SimGrid ran
};

// Simulates one training step. Throws ScheduleError for a schedule over the memory limit
// (before running), for actions outside the problem, and for a deadlock (naming the stuck
// devices and what each waits for); InputError for a cluster that cannot hold the problem;
// Error when the simulation process fails. Never prints unless options.verbose.
SimgridResult run_simgrid(const Problem& problem, const Schedule& schedule, const SimgridOptions& options = {});

// run_simgrid's trace only.
Trace simulate_simgrid(const Problem& problem, const Schedule& schedule, const SimgridOptions& options = {});

}  // namespace zb
