// The problem as a user writes it (scalars or arrays, per device or per stage) and its JSON form.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/problem.h"

namespace zb {

// Costs are scalars (per device: the device's whole slice of layers), arrays of length p (per
// device) or arrays of length p*v (per stage). Per-device values are split evenly over the v
// chunks, so changing v never changes the total work. t_comm is per boundary, not split: a scalar,
// an array of length p (per link: t_comm[d] between devices d and d+1, the last the wrap-around
// back to device 0; any placement takes its boundaries' links from it), or a per-stage array (v > 1).
// Memory deltas follow the same rules as the costs.
struct ProblemSpec {
  int devices = 0;
  int microbatches = 0;
  int chunks = 1;
  std::optional<Placement> placement;  // default: linear for v = 1, interleaved otherwise
  std::vector<double> t_f, t_b, t_w;
  std::vector<double> t_bw;  // empty: t_b + t_w
  std::vector<double> t_comm{0.0};
  std::vector<double> t_a2a;  // empty: no all-to-all
  double overlap = 0;
  double a2a_overlap = 1;                 // Problem::a2a_overlap
  double comm_sm_share = kDeepSeekCommSmShare;  // Problem::comm_sm_share
  std::vector<double> mem_f{1.0}, mem_b{-0.5}, mem_w{-0.5};
  std::vector<double> t_offload;    // empty: no offload described (Problem::t_offload)
  std::vector<double> mem_offload;  // empty: mem_f
  std::optional<MemoryLimit> mem_limit;
  double bytes_act = 0;
  TimeUnit time_unit = TimeUnit::ms;
  // The optimizer step after the pipeline (docs/design.md section 7): each device's update, a
  // scalar or one value per device (empty: 0), and one message of the gradient-norm all-reduce.
  std::vector<double> t_opt;
  double t_reduce_hop = 0;
  // The data-parallel gradient all-reduce of a device's stages, split over chunks like the costs
  // (empty: no data parallelism).
  std::vector<double> t_dp_reduce;
  double dp_reduce_overlap = 1;  // Problem::dp_reduce_overlap

  // Normalises and validates; throws InputError naming the field (prefixed by `source`).
  Problem build(std::string_view source = "problem") const;

  // True when no array is per stage (t_comm: per link), so the problem can be rebuilt for another v.
  bool chunk_independent() const;
  // The placement set, or the default for the chunk count.
  Placement resolved_placement() const {
    return placement.value_or(chunks == 1 ? Placement::linear : Placement::interleaved);
  }
  ProblemSpec with_chunks(int v) const;
};

// Reads the fields of a problem object; unknown fields are errors naming `source` and the field.
ProblemSpec problem_spec_from_json(const nlohmann::json& object, std::string_view source);
nlohmann::json to_json(const ProblemSpec& spec);

// "3" or "1,2,3" -> values; throws InputError naming `field`.
std::vector<double> parse_number_list(std::string_view text, std::string_view field);

}  // namespace zb
