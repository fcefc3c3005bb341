// A model setup's costs written into a problem (see model_costs.h).
#include "sim/app/catalog/model_costs.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/core/optimizer_step.h"
#include "sim/support/error.h"

namespace zb::catalog {

namespace {

// Per stage -> per device (v = 1) -> scalar when all equal.
std::vector<double> compact(const std::vector<double>& per_stage, int chunks) {
  if (chunks == 1 && std::all_of(per_stage.begin(), per_stage.end(),
                                 [&](double value) { return value == per_stage.front(); })) {
    return {per_stage.front()};
  }
  return per_stage;
}

}  // namespace

models::PipelineShape pipeline_shape(const Problem& problem) {
  models::PipelineShape shape;
  shape.devices = problem.devices;
  shape.microbatches = problem.microbatches;
  for (int s = 0; s < problem.stages(); ++s) shape.device_of_stage.push_back(problem.device_of_stage(s));
  shape.parameter_copies = problem.parameter_copies();
  shape.all_reduce_hops = all_reduce_hops(problem);
  shape.all_reduce_hop_bytes = kGradNormBytes;
  return shape;
}

models::StageCosts apply_model_costs(const models::ModelSetup& setup, ProblemSpec& spec,
                                     const std::set<std::string>& explicit_fields, std::string_view source) {
  if (spec.devices < 1) throw InputError(fmt::format("{}: field 'p' is {}: need at least 1 device", source, spec.devices));
  if (spec.chunks < 1) throw InputError(fmt::format("{}: field 'chunks' is {}: need at least 1", source, spec.chunks));
  Problem problem;
  problem.devices = spec.devices;
  problem.chunks = spec.chunks;
  problem.placement = spec.resolved_placement();
  check_placement_chunks(problem.placement, problem.chunks, source);  // stage_costs maps stages to devices
  const models::PipelineShape shape = pipeline_shape(problem);
  const models::StageCosts costs = models::stage_costs(setup, shape, source);
  // t_comm is per stage boundary, so it stays per stage unless uniform.
  const auto set = [&](const char* field, std::vector<double>& target, const std::vector<double>& values) {
    if (!explicit_fields.contains(field)) target = compact(values, spec.chunks);
  };
  set("t_f", spec.t_f, costs.t_f_ms);
  set("t_b", spec.t_b, costs.t_b_ms);
  set("t_w", spec.t_w, costs.t_w_ms);
  // The MoE all-to-all apart from F's and B's compute, where an overlapped pair can hide it
  // (sim/core/pass_time.h); a pass alone takes both, as the model costs it.
  const bool all_to_all = std::any_of(costs.t_a2a_ms.begin(), costs.t_a2a_ms.end(), [](double ms) { return ms > 0; });
  if (all_to_all && !explicit_fields.contains("t_f") && !explicit_fields.contains("t_b") &&
      !explicit_fields.contains("t_a2a")) {
    std::vector<double> f = costs.t_f_ms, b = costs.t_b_ms;
    for (std::size_t s = 0; s < f.size(); ++s) {
      f[s] -= costs.t_a2a_ms[s];
      b[s] -= costs.t_a2a_ms[s];
    }
    spec.t_f = compact(f, spec.chunks);
    spec.t_b = compact(b, spec.chunks);
    spec.t_a2a = compact(costs.t_a2a_ms, spec.chunks);
  }
  if (!explicit_fields.contains("t_comm")) {
    const bool uniform = std::all_of(costs.t_comm_ms.begin(), costs.t_comm_ms.end(),
                                     [&](double value) { return value == costs.t_comm_ms.front(); });
    spec.t_comm = uniform ? std::vector<double>{costs.t_comm_ms.front()} : costs.t_comm_ms;
  }
  set("mem_f", spec.mem_f, costs.mem_f_GB);
  set("mem_b", spec.mem_b, costs.mem_b_GB);
  set("mem_w", spec.mem_w, costs.mem_w_GB);
  if (!explicit_fields.contains("bytes_act")) spec.bytes_act = costs.bytes_act;
  if (!costs.t_offload_ms.empty()) set("t_offload", spec.t_offload, costs.t_offload_ms);
  if (!explicit_fields.contains("t_reduce_hop")) spec.t_reduce_hop = costs.reduce_hop_ms;
  if (!explicit_fields.contains("t_opt")) spec.t_opt = models::optimizer_times_ms(setup, costs);
  if (!explicit_fields.contains("t_dp_reduce")) spec.t_dp_reduce = models::dp_reduce_times_ms(setup, shape, costs);
  if (!explicit_fields.contains("time_unit")) spec.time_unit = TimeUnit::ms;
  if (!explicit_fields.contains("mem_limit")) {
    spec.mem_limit = MemoryLimit{models::auto_memory_limit_GB(setup, costs, source), false};
  }
  return costs;
}

}  // namespace zb::catalog
