// zbsim recommend's search: from a model, a cluster and a global batch to the fastest training
// plans that fit in device memory (pipeline, tensor and data degrees, chunks, microbatch size and
// count, schedule, layer split, recomputation, optimizer sharding). docs/design.md section 19.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "models/hardware.h"

namespace zb::plan {

struct PlanQuery {
  std::string model;     // a transformer preset name or path
  std::string hardware;  // a hardware preset; empty: the one preset the cluster's GPU peak names
  std::string cluster;   // a cluster preset name or path
  int global_batch = 0;  // sequences per optimizer step, over all replicas
  std::optional<int> seq_len;
  std::optional<int> gpus;  // default: every GPU of the cluster
  int jobs = 1;
  int top = 10;
  bool prune = true;           // false: evaluate every candidate (the exhaustive reference of the tests)
  bool confirm_simgrid = true; // re-run the top candidates on the SimGrid engine when it is built
  models::CostModel cost_model = models::CostModel::calibrated;  // models/hardware.h
};

// One point of the search space. pp * tp * dp = GPUs; m = global batch / (dp * mbs).
struct PlanCandidate {
  int pp = 1, tp = 1, dp = 1;
  int ep = 1;  // expert parallelism (a mixture-of-experts model), carved out of tp x dp
  int chunks = 1;
  std::string placement;  // linear | interleaved | vshape | bidirectional
  int microbatch_size = 1;
  int microbatches = 1;
  std::string schedule;
  std::string split;      // a models/stage_split.h kind
  std::string recompute;  // none | selective | full
  std::string sharding;   // none | zero-1
  // Chunks per device whose activations go to host memory (the offload pass, sim/core/offload_pass.h;
  // 0: none). po-h and po-f offload by themselves and keep 0 here.
  int offload_chunks = 0;

  // "pp8 tp8 dp1 v1 mbs1 m64 zb-auto split=paper recompute=none sharding=none" (+ " ep8", " offload=2")
  std::string label() const;
};

struct PlanResult {
  PlanCandidate candidate;
  double step_time_s = 0;  // evaluator, steady state, the schedule's normal optimizer mode
  double samples_per_s_per_gpu = 0;
  double tokens_per_s = 0;
  double mfu = 0;
  double memory_GB = 0;    // the fullest device: static memory plus activation peak
  double bubble_rate = 0;
  double compute_s = 0;    // the busiest device's compute per step
  double bound_s = 0;      // the search's lower bound of step_time_s for the shape (step_bound.h)
  std::optional<double> simgrid_step_time_s;  // top candidates, when SimGrid is built
  std::string loses_because;  // empty for the first
};

// Why nothing fitted, about the candidate that came closest.
struct ClosestMiss {
  std::string candidate;
  std::string reason;
  double over_GB = 0;  // how far over device memory it was
};

struct PlanSearch {
  std::string model_label, hardware_label, cluster_label;
  int gpus = 0, seq_len = 0, layers = 0, global_batch = 0;
  double device_GB = 0;
  std::vector<PlanResult> top;     // best first (step time, then memory, then the candidate's order)
  std::vector<PlanResult> pareto;  // every plan no other beats in both throughput and memory, by memory
  long candidates = 0;             // points of the space
  long pruned_memory = 0;          // refused before scheduling: static memory or one microbatch does not fit
  long pruned_bound = 0;           // their lower bound (step_bound.h) is slower than the tenth best
  long evaluated = 0;              // run through the evaluator
  long over_limit = 0, unsupported = 0;  // evaluated, but over device memory or not buildable
  std::optional<ClosestMiss> closest;    // when nothing fits
  std::string winner_scenario;  // JSON text of a scenario file `zbsim simulate --scenario` accepts
};

// The scenario object of one candidate (model-driven; its one schedule).
nlohmann::json plan_scenario_json(const PlanQuery& query, const std::string& hardware, const PlanCandidate& candidate);

// Runs the search. `progress(done, total)` is called after each evaluated batch (from the calling
// thread), `total` being the candidates left after memory pruning.
// Bad input (unknown model, cluster or hardware, a batch that no data-parallel degree divides, more
// GPUs than the cluster has) is an InputError naming the flag and the value; nothing fitting is an
// InputError naming the closest candidate and why it missed.
PlanSearch search_plans(const PlanQuery& query, const std::function<void(long, long)>& progress = {});

}  // namespace zb::plan
