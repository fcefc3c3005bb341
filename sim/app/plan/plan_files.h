// What zbsim recommend writes: the winning plan as files a run can start from (scenario, PyTorch
// schedule CSV, torchtitan and Megatron-LM flags), and the memory-throughput Pareto chart.
#pragma once

#include <string>

#include "sim/app/plan/plan_search.h"

namespace zb::plan {

// Writes into `dir` (created): plan.json (the scenario), schedule.csv (PyTorch's _load_csv format;
// left out, with a line in the settings saying why, for a schedule that cannot be exported),
// torchtitan.txt and megatron.txt (command-line overrides). Returns the paths written, one a line.
std::string write_plan_files(const PlanSearch& search, const std::string& dir);

// Megatron-LM's flags for a plan: parallel degrees, batch, recomputation, distributed optimizer,
// uneven first/last stages for the paper split, virtual stages for interleaving.
std::string megatron_settings(const PlanCandidate& plan, int global_batch, int seq_len, int layers);

// Step throughput (samples/s/GPU) against memory per device: every Pareto plan, the winner marked.
std::string pareto_svg(const PlanSearch& search);

}  // namespace zb::plan
