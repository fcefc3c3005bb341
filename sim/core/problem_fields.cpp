// The table of problem fields (see problem_fields.h).
#include "sim/core/problem_fields.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "sim/support/error.h"

namespace zb {

namespace {

using nlohmann::json;
using Kind = ProblemField::Kind;

constexpr ProblemField kFields[] = {
    {"p", "p", "devices (pipeline stages when chunks = 1)", Kind::integer, &ProblemSpec::devices},
    {"m", "m", "microbatches per step", Kind::integer, &ProblemSpec::microbatches},
    {"chunks", "chunks", "chunks (stages) per device, default 1", Kind::integer, &ProblemSpec::chunks},
    {"placement", "placement",
     "linear | interleaved | vshape | bidirectional (two model copies, dualpipe) (default: linear, or interleaved "
     "when chunks > 1)",
     Kind::placement},
    {"t_f", "tf", "forward time per device: X, or a list per device or per stage", Kind::numbers, nullptr,
     &ProblemSpec::t_f},
    {"t_b", "tb", "input-gradient backward time (B)", Kind::numbers, nullptr, &ProblemSpec::t_b},
    {"t_w", "tw", "weight-gradient backward time (W)", Kind::numbers, nullptr, &ProblemSpec::t_w},
    {"t_bw", "tbw", "fused backward time (default tb + tw)", Kind::numbers, nullptr, &ProblemSpec::t_bw},
    {"t_comm", "tcomm", "transfer time between neighbouring devices (default 0)", Kind::numbers, nullptr,
     &ProblemSpec::t_comm},
    {"t_a2a", "t-a2a", "all-to-all time of each F, B and BW (MoE), exposed when a pass runs alone, hidden under the partner's compute in an overlapped pair (default 0)",
     Kind::numbers, nullptr, &ProblemSpec::t_a2a},
    {"overlap", "overlap", "how much of an overlapped F&B pair's compute runs concurrently: 0 (default, one after the other) to 1",
     Kind::number, nullptr, nullptr, &ProblemSpec::overlap},
    {"a2a_overlap", "a2a-overlap", "the share of each part's all-to-all an overlapped F&B pair hides under the other part's compute: 1 (default: DualPipe) to 0 (all exposed, as without EP overlap)",
     Kind::number, nullptr, nullptr, &ProblemSpec::a2a_overlap},
    {"comm_sm_share", "comm-sm-share", "the share of SMs the all-to-all takes while it runs beside a pair's compute, which runs that much slower meanwhile (default 0.1515: DeepSeek-V3's 20 of 132 SMs)",
     Kind::number, nullptr, nullptr, &ProblemSpec::comm_sm_share},
    {"mem_f", "mem-f", "activation memory added by F (default 1 = M_B)", Kind::numbers, nullptr, &ProblemSpec::mem_f},
    {"mem_b", "mem-b", "activation memory added by B (default -0.5)", Kind::numbers, nullptr, &ProblemSpec::mem_b},
    {"mem_w", "mem-w", "activation memory added by W (default -0.5)", Kind::numbers, nullptr, &ProblemSpec::mem_w},
    {"t_offload", "t-offload", "activation offload (O) and reload (L): one way, one microbatch's activations of a device (or a list per device or per stage) over its host link, on the copy engine beside compute (default: none; schedules with O or L need it)",
     Kind::numbers, nullptr, &ProblemSpec::t_offload},
    {"mem_offload", "mem-offload", "activation memory an offload frees and its reload takes back (default mem_f: all that F left)",
     Kind::numbers, nullptr, &ProblemSpec::mem_offload},
    {"mem_limit", "mem-limit", "activation memory limit: a number, or Np for N*p*M_B (e.g. 2p); zbsim also takes auto (model-driven scenarios: what device memory leaves)", Kind::mem_limit},
    {"bytes_act", "bytes-act", "activation bytes per microbatch between stages (SimGrid engine)", Kind::number,
     nullptr, nullptr, &ProblemSpec::bytes_act},
    {"time_unit", "time-unit", "unit of the times: s, ms (default), us or ns", Kind::time_unit},
    {"t_opt", "t-opt", "optimizer update time of a device between steps: X, or a list per device (default 0)",
     Kind::numbers, nullptr, &ProblemSpec::t_opt},
    {"t_reduce_hop", "t-reduce-hop", "one message of the gradient-norm all-reduce between two devices; it chains through the stages from last to first, then stage 0 tells every device (default 0)",
     Kind::number, nullptr, nullptr, &ProblemSpec::t_reduce_hop},
    {"t_dp_reduce", "t-dp-reduce", "data-parallel gradient all-reduce of a device's stages, from the start of each stage's last W (or BW), beside the compute: X, or a list per device or per stage (default 0: no data parallelism)",
     Kind::numbers, nullptr, &ProblemSpec::t_dp_reduce},
    {"dp_reduce_overlap", "dp-reduce-overlap", "the share of the data-parallel reduction that runs beside the compute; the rest waits for the device's last pass: 1 (default: Megatron's overlapped reduction) to 0 (DeepSpeed's pipeline engine)",
     Kind::number, nullptr, nullptr, &ProblemSpec::dp_reduce_overlap},
};

int int_from_text(std::string_view text, const std::string& context) {
  int value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size()) {
    throw InputError(fmt::format("{}: expected a whole number, got '{}'", context, excerpt(text)));
  }
  return value;
}

double number_from_text(std::string_view text, const std::string& context) {
  const std::vector<double> values = parse_number_list(text, context);
  if (values.size() != 1) throw InputError(fmt::format("{}: expected one number, got '{}'", context, excerpt(text)));
  return values[0];
}

int int_from_json(const json& value, const std::string& context) {
  if (value.is_number_integer()) {
    const auto wide = value.get<long long>();
    if (wide >= -1'000'000'000 && wide <= 1'000'000'000) return static_cast<int>(wide);
  } else if (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>() &&
             std::abs(value.get<double>()) <= 1e9) {
    return static_cast<int>(value.get<double>());
  }
  throw InputError(fmt::format("{} is {}: expected an integer", context, value.dump()));
}

std::vector<double> numbers_from_json(const json& value, const std::string& context) {
  if (value.is_number()) return {value.get<double>()};
  if (value.is_array() && !value.empty()) {
    std::vector<double> out;
    for (const auto& item : value) {
      if (!item.is_number()) throw InputError(fmt::format("{} has {}: expected numbers", context, item.dump()));
      out.push_back(item.get<double>());
    }
    return out;
  }
  throw InputError(fmt::format("{} is {}: expected a number or a non-empty array of numbers", context, value.dump()));
}

std::string string_from_json(const json& value, const std::string& context, const char* example) {
  if (!value.is_string()) throw InputError(fmt::format("{} must be a string such as \"{}\"", context, example));
  return value.get<std::string>();
}

}  // namespace

void ProblemField::set_from_text(ProblemSpec& spec, std::string_view text, const std::string& context) const {
  switch (kind) {
    case Kind::integer: spec.*integer = int_from_text(text, context); return;
    case Kind::numbers: spec.*numbers = parse_number_list(text, context); return;
    case Kind::number: spec.*number = number_from_text(text, context); return;
    case Kind::placement: spec.placement = parse_placement(text, context); return;
    case Kind::mem_limit: spec.mem_limit = MemoryLimit::parse(text, context); return;
    case Kind::time_unit: spec.time_unit = parse_time_unit(text, context); return;
  }
}

void ProblemField::set_from_json(ProblemSpec& spec, const json& value, const std::string& context) const {
  switch (kind) {
    case Kind::integer: spec.*integer = int_from_json(value, context); return;
    case Kind::numbers: spec.*numbers = numbers_from_json(value, context); return;
    case Kind::number:
      if (!value.is_number()) throw InputError(context + " must be a number");
      spec.*number = value.get<double>();
      return;
    case Kind::placement: spec.placement = parse_placement(string_from_json(value, context, "vshape"), context); return;
    case Kind::mem_limit:
      if (value.is_null()) {
        spec.mem_limit.reset();
      } else if (value.is_number()) {
        spec.mem_limit = MemoryLimit::parse(value.dump(), context);
      } else if (value.is_string()) {
        spec.mem_limit = MemoryLimit::parse(value.get<std::string>(), context);
      } else {
        throw InputError(context + " must be a number or a string like \"2p\"");
      }
      return;
    case Kind::time_unit: spec.time_unit = parse_time_unit(string_from_json(value, context, "ms"), context); return;
  }
}

void ProblemField::write_json(const ProblemSpec& spec, json& out) const {
  const std::string name(key);
  switch (kind) {
    case Kind::integer: out[name] = spec.*integer; return;
    case Kind::numbers: {
      const std::vector<double>& values = spec.*numbers;
      if (values.empty()) return;  // t_bw: t_b + t_w
      out[name] = values.size() == 1 ? json(values[0]) : json(values);
      return;
    }
    case Kind::number:
      if (spec.*number != ProblemSpec{}.*number) out[name] = spec.*number;  // a default is left out
      return;
    case Kind::placement:
      out[name] =
          placement_name(spec.resolved_placement());
      return;
    case Kind::mem_limit:
      if (!spec.mem_limit) return;
      if (spec.mem_limit->times_p) {
        out[name] = spec.mem_limit->to_string();
      } else {
        out[name] = spec.mem_limit->value;
      }
      return;
    case Kind::time_unit: out[name] = time_unit_name(spec.time_unit); return;
  }
}

std::span<const ProblemField> problem_fields() { return kFields; }

const ProblemField* find_problem_field(std::string_view key) {
  for (const ProblemField& field : kFields) {
    if (field.key == key) return &field;
  }
  return nullptr;
}

std::string problem_field_keys() {
  std::vector<std::string_view> keys;
  for (const ProblemField& field : kFields) keys.push_back(field.key);
  return fmt::format("{}", fmt::join(keys, ", "));
}

}  // namespace zb
