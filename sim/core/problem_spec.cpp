// From what a user writes (scalars, per-device or per-stage arrays, JSON) to a normalised Problem.
#include "sim/core/problem_spec.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "sim/support/error.h"
#include "sim/core/limits.h"
#include "sim/core/problem_fields.h"

namespace zb {

namespace {

// Scalars and per-device arrays are split evenly over the chunks one microbatch runs through on the
// device (chunks_per_path); per-stage arrays are taken as they are.
std::vector<double> per_stage(const std::vector<double>& values, std::string_view field,
                              const ProblemSpec& spec, bool split_over_chunks, std::string_view source) {
  const int p = spec.devices;
  const int v = spec.chunks;
  const int stages = p * v;
  const Placement placement = spec.resolved_placement();
  const double share = split_over_chunks ? 1.0 / chunks_per_path(placement, v) : 1.0;
  if (values.size() == 1) return std::vector<double>(stages, values[0] * share);
  if (static_cast<int>(values.size()) == stages) return values;
  if (split_over_chunks && static_cast<int>(values.size()) == p) {
    Problem shape;
    shape.devices = p;
    shape.chunks = v;
    shape.placement = placement;
    std::vector<double> out(stages);
    for (int d = 0; d < p; ++d) {
      for (int c = 0; c < v; ++c) out[shape.stage_of(d, c)] = values[d] * share;
    }
    return out;
  }
  throw InputError(fmt::format("{}: field '{}' has {} values: expected one, {} (per device) or {} "
                               "(per stage)",
                               source, field, values.size(), p, stages));
}

// A t_comm list of length p names links, not boundaries: t_comm[d] is the transfer between device
// d and device d+1 (mod p), in either direction. It holds for every placement (with v = 1 it is
// the per-stage list itself), so a generator that changes the chunk count keeps the links' costs:
// the boundary s -> s+1 takes the link its two devices share (d to d+1, V's way back d+1 to d, and
// the interleaved wrap-around p-1 to 0 the last link); a boundary inside one device costs nothing anyway.
std::vector<double> per_boundary_from_links(const std::vector<double>& links, const Problem& shape) {
  const int p = shape.devices;
  std::vector<double> out(static_cast<std::size_t>(shape.stages()), 0.0);
  for (int s = 0; s < shape.stages(); ++s) {
    const int from = shape.device_of_stage(s);
    const int to = shape.device_of_stage((s + 1) % shape.stages());
    if (to == from + 1) {
      out[s] = links[from];
    } else if (from == to + 1) {
      out[s] = links[to];
    } else if (from != to) {  // the wrap-around between devices p-1 and 0
      out[s] = links[p - 1];
    }
  }
  return out;
}

}  // namespace

Problem ProblemSpec::build(std::string_view source) const {
  // 0 is also what an unset field holds: name the flag and the scenario field that set it.
  if (devices < 1) {
    throw InputError(fmt::format("{}: p is {}: give the number of pipeline devices (--p N, or \"p\" in a scenario's "
                                 "problem), at least 1",
                                 source, devices));
  }
  if (microbatches < 1) {
    throw InputError(fmt::format("{}: m is {}: give the number of microbatches (--m N, or \"m\" in a scenario's "
                                 "problem), at least 1",
                                 source, microbatches));
  }
  if (chunks < 1) throw InputError(fmt::format("{}: field 'chunks' is {}: need at least 1", source, chunks));
  check_action_count(devices, chunks, microbatches, source);  // before the per-stage arrays
  for (auto [field, values] : {std::pair{"t_f", &t_f}, {"t_b", &t_b}, {"t_w", &t_w}}) {
    if (values->empty()) {
      throw InputError(fmt::format("{}: field '{}' is missing (--{} on the command line)", source, field,
                                   find_problem_field(field)->flag));
    }
  }
  Problem problem;
  problem.devices = devices;
  problem.microbatches = microbatches;
  problem.chunks = chunks;
  problem.placement = resolved_placement();
  check_placement_chunks(problem.placement, chunks, source);  // before anything maps stages to devices
  problem.t_f = per_stage(t_f, "t_f", *this, true, source);
  problem.t_b = per_stage(t_b, "t_b", *this, true, source);
  problem.t_w = per_stage(t_w, "t_w", *this, true, source);
  if (t_bw.empty()) {
    problem.t_bw.resize(problem.t_b.size());
    for (std::size_t i = 0; i < problem.t_b.size(); ++i) problem.t_bw[i] = problem.t_b[i] + problem.t_w[i];
  } else {
    problem.t_bw = per_stage(t_bw, "t_bw", *this, true, source);
  }
  const bool per_link = static_cast<int>(t_comm.size()) == devices && chunks > 1;
  if (t_comm.size() != 1 && !per_link && static_cast<int>(t_comm.size()) != devices * chunks) {
    throw InputError(fmt::format("{}: field 't_comm' has {} values: expected one, {} (per link: device d to d+1) "
                                 "or {} (per stage boundary)",
                                 source, t_comm.size(), devices, devices * chunks));
  }
  problem.t_comm = per_link ? per_boundary_from_links(t_comm, problem) : per_stage(t_comm, "t_comm", *this, false, source);
  if (!t_a2a.empty()) problem.t_a2a = per_stage(t_a2a, "t_a2a", *this, true, source);
  problem.overlap = overlap;
  problem.a2a_overlap = a2a_overlap;
  problem.comm_sm_share = comm_sm_share;
  problem.mem_f = per_stage(mem_f, "mem_f", *this, true, source);
  problem.mem_b = per_stage(mem_b, "mem_b", *this, true, source);
  problem.mem_w = per_stage(mem_w, "mem_w", *this, true, source);
  if (!t_offload.empty()) problem.t_offload = per_stage(t_offload, "t_offload", *this, true, source);
  if (!mem_offload.empty()) problem.mem_offload = per_stage(mem_offload, "mem_offload", *this, true, source);
  problem.mem_limit = mem_limit;
  problem.bytes_act = bytes_act;
  problem.time_unit = time_unit;
  if (t_opt.size() > 1 && static_cast<int>(t_opt.size()) != devices) {
    throw InputError(fmt::format("{}: field 't_opt' has {} values: expected one or {} (per device)", source,
                                 t_opt.size(), devices));
  }
  problem.t_opt = t_opt.size() == 1 ? std::vector<double>(static_cast<std::size_t>(devices), t_opt[0]) : t_opt;
  problem.t_reduce_hop = t_reduce_hop;
  if (!t_dp_reduce.empty()) problem.t_dp_reduce = per_stage(t_dp_reduce, "t_dp_reduce", *this, true, source);
  problem.dp_reduce_overlap = dp_reduce_overlap;
  try {
    problem.validate();
  } catch (const InputError& e) {
    std::string message = e.what();
    if (message.starts_with("problem: ")) message.erase(0, 9);
    throw InputError(fmt::format("{}: {}", source, message));
  }
  return problem;
}

bool ProblemSpec::chunk_independent() const {
  auto ok = [&](const std::vector<double>& values) {
    return values.size() <= 1 || static_cast<int>(values.size()) == devices;
  };
  return ok(t_f) && ok(t_b) && ok(t_w) && ok(t_bw) && ok(t_a2a) && ok(t_comm) && ok(t_dp_reduce) && ok(mem_f) &&
         ok(mem_b) && ok(mem_w) && ok(t_offload) && ok(mem_offload);
}

ProblemSpec ProblemSpec::with_chunks(int v) const {
  ProblemSpec copy = *this;
  copy.chunks = v;
  if (v == 1) {
    copy.placement = Placement::linear;
  } else if (!placement || *placement == Placement::linear) {
    copy.placement = Placement::interleaved;
  }
  return copy;
}

std::vector<double> parse_number_list(std::string_view text, std::string_view field) {
  std::vector<double> values;
  std::size_t pos = 0;
  while (true) {
    const auto comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    double value = 0;
    const auto* end = item.data() + item.size();
    auto [ptr, ec] = std::from_chars(item.data(), end, value);
    if (item.empty() || ec != std::errc{} || ptr != end || !std::isfinite(value)) {
      throw InputError(fmt::format("{}: bad number '{}' in '{}' (expected a number or a comma-separated "
                                   "list like 1,2.5,3)",
                                   field, item, text));
    }
    values.push_back(value);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return values;
}

ProblemSpec problem_spec_from_json(const nlohmann::json& object, std::string_view source) {
  if (!object.is_object()) {
    throw InputError(fmt::format("{}: the problem must be a JSON object, got {}", source, object.type_name()));
  }
  ProblemSpec spec;
  for (const auto& [key, value] : object.items()) {
    const ProblemField* field = find_problem_field(key);
    if (!field) {
      throw InputError(fmt::format("{}: unknown field '{}' (known: {})", source, key, problem_field_keys()));
    }
    field->set_from_json(spec, value, fmt::format("{}: field '{}'", source, key));
  }
  return spec;
}

nlohmann::json to_json(const ProblemSpec& spec) {
  nlohmann::json out = nlohmann::json::object();
  for (const ProblemField& field : problem_fields()) field.write_json(spec, out);
  return out;
}

}  // namespace zb
