// The keys of a recommend search's JSON (plan_json.h).
#include "sim/app/plan/plan_json.h"

#include <nlohmann/json.hpp>

namespace zb::plan {

namespace {

nlohmann::json result_json(const PlanResult& r) {
  const auto& c = r.candidate;
  nlohmann::json out = {{"pp", c.pp},
                        {"tp", c.tp},
                        {"dp", c.dp},
                        {"ep", c.ep},
                        {"chunks", c.chunks},
                        {"placement", c.placement},
                        {"microbatch_size", c.microbatch_size},
                        {"m", c.microbatches},
                        {"schedule", c.schedule},
                        {"split", c.split},
                        {"recompute", c.recompute},
                        {"offload_chunks", c.offload_chunks},
                        {"sharding", c.sharding},
                        {"step_time_s", r.step_time_s},
                        {"samples_per_s_per_gpu", r.samples_per_s_per_gpu},
                        {"tokens_per_s", r.tokens_per_s},
                        {"mfu", r.mfu},
                        {"memory_per_device_GB", r.memory_GB},
                        {"bubble_rate", r.bubble_rate}};
  if (r.simgrid_step_time_s) out["simgrid_step_time_s"] = *r.simgrid_step_time_s;
  if (!r.loses_because.empty()) out["loses_because"] = r.loses_because;
  return out;
}

}  // namespace

nlohmann::json plan_search_json(const PlanSearch& search) {
  nlohmann::json out;
  out["model"] = search.model_label;
  out["hardware"] = search.hardware_label;
  out["cluster"] = search.cluster_label;
  out["gpus"] = search.gpus;
  out["global_batch"] = search.global_batch;
  out["seq_len"] = search.seq_len;
  out["device_GB"] = search.device_GB;
  out["search"] = {{"candidates", search.candidates},   {"pruned_memory", search.pruned_memory},
                   {"pruned_bound", search.pruned_bound}, {"evaluated", search.evaluated},
                   {"over_limit", search.over_limit},     {"unsupported", search.unsupported}};
  out["top"] = nlohmann::json::array();
  for (const auto& r : search.top) out["top"].push_back(result_json(r));
  out["pareto"] = nlohmann::json::array();
  for (const auto& r : search.pareto) out["pareto"].push_back(result_json(r));
  return out;
}

}  // namespace zb::plan
