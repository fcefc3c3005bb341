// The normalised problem: placement arithmetic, derived quantities and validation.
#include "sim/core/problem.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "sim/support/error.h"
#include "sim/core/limits.h"

namespace zb {

std::string_view placement_name(Placement placement) {
  switch (placement) {
    case Placement::linear: return "linear";
    case Placement::interleaved: return "interleaved";
    case Placement::vshape: return "vshape";
    case Placement::bidirectional: return "bidirectional";
  }
  return "?";
}

Placement parse_placement(std::string_view text, std::string_view context) {
  if (text == "linear") return Placement::linear;
  if (text == "interleaved" || text == "looped") return Placement::interleaved;
  if (text == "vshape" || text == "v") return Placement::vshape;
  if (text == "bidirectional") return Placement::bidirectional;
  throw InputError(fmt::format(
      "{}: unknown placement '{}' (expected linear, interleaved, vshape or bidirectional)", context, text));
}

MemoryLimit MemoryLimit::parse(std::string_view text, std::string_view context) {
  MemoryLimit limit;
  std::string_view number = text;
  if (!number.empty() && number.back() == 'p') {
    limit.times_p = true;
    number.remove_suffix(1);
  }
  const auto* end = number.data() + number.size();
  auto [ptr, ec] = std::from_chars(number.data(), end, limit.value);
  if (number.empty() || ec != std::errc{} || ptr != end || !std::isfinite(limit.value) ||
      limit.value <= 0) {
    throw InputError(fmt::format(
        "{}: bad memory limit '{}' (expected a positive number, or a multiple of p*M_B like 2p)",
        context, text));
  }
  return limit;
}

std::string MemoryLimit::to_string() const {
  return times_p ? fmt::format("{}p", value) : fmt::format("{}", value);
}

int Problem::device_of_stage(int stage) const {
  switch (placement) {
    case Placement::linear:
    case Placement::interleaved: return stage % devices;
    case Placement::vshape:
    case Placement::bidirectional: return stage < devices ? stage : 2 * devices - 1 - stage;
  }
  return 0;
}

int chunks_per_path(Placement placement, int chunks) { return placement == Placement::bidirectional ? 1 : chunks; }

StagePath Problem::path(int microbatch) const {
  if (placement != Placement::bidirectional) return {0, stages() - 1};
  return microbatch < microbatches / 2 ? StagePath{0, devices - 1} : StagePath{devices, 2 * devices - 1};
}

int Problem::microbatches_through(int stage) const {
  if (placement != Placement::bidirectional) return microbatches;
  return stage < devices ? microbatches / 2 : microbatches - microbatches / 2;
}

int Problem::chunk_of_stage(int stage) const { return stage / devices; }

int Problem::stage_of(int device, int chunk) const {
  const bool mirrored = placement == Placement::vshape || placement == Placement::bidirectional;
  if (mirrored && chunk % 2 == 1) return (chunk + 1) * devices - 1 - device;
  return chunk * devices + device;
}

double Problem::comm_after(int stage) const {
  if (stage + 1 >= stages()) return 0.0;
  return device_of_stage(stage) == device_of_stage(stage + 1) ? 0.0 : t_comm[stage];
}

double Problem::activation_per_microbatch(int device) const {
  double total = 0;
  for (int c = 0; c < chunks; ++c) {
    const double held = mem_f[stage_of(device, c)];
    total = placement == Placement::bidirectional ? std::max(total, held) : total + held;
  }
  return total;
}

double Problem::activation_unit() const {
  // The official runtime's rule (max(f_mem[:2]) in zerobubble/runtime.py): devices 0 and 1 are
  // where 1F1B keeps the most microbatches (p and p-1), so p times their M_B is 1F1B's memory; a
  // larger last stage (the output layer's logits) holds one microbatch in 1F1B and does not count.
  double unit = 0;
  for (int d = 0; d < std::min(devices, 2); ++d) unit = std::max(unit, activation_per_microbatch(d));
  return unit;
}

std::optional<double> Problem::memory_limit() const {
  if (!mem_limit) return std::nullopt;
  return mem_limit->times_p ? mem_limit->value * devices * activation_unit() : mem_limit->value;
}

double Problem::device_work(int device) const {
  double total = 0;
  for (int c = 0; c < chunks; ++c) {
    const int s = stage_of(device, c);
    total += microbatches_through(s) * (t_f[s] + t_b[s] + t_w[s]);
  }
  return total;
}

double Problem::optimizer_time(int device) const {
  return t_opt.empty() ? 0.0 : t_opt[static_cast<std::size_t>(device)];
}

double Problem::dp_reduce_time(int stage) const {
  return t_dp_reduce.empty() ? 0.0 : t_dp_reduce[static_cast<std::size_t>(stage)];
}

double Problem::work() const {
  double most = 0;
  for (int d = 0; d < devices; ++d) most = std::max(most, device_work(d));
  return most;
}

namespace {

void check_array(const std::vector<double>& values, std::string_view field, int stages,
                 bool allow_negative, bool allow_positive) {
  if (static_cast<int>(values.size()) != stages) {
    throw InputError(fmt::format("problem: field '{}' has {} values, expected {} (one per stage)",
                                 field, values.size(), stages));
  }
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    if (!std::isfinite(v) || (!allow_negative && v < 0) || (!allow_positive && v > 0)) {
      throw InputError(fmt::format("problem: field '{}' has value {} at stage {}: expected {}",
                                   field, v, i,
                                   !allow_negative ? "a finite number >= 0"
                                                   : "a finite number <= 0"));
    }
  }
}

// Every time an engine computes is a sum of the problem's times: at most all of one step's work
// done one after another (every action and transfer of every microbatch, the optimizer and the
// gradient reduction), times the steps run. Each value can be finite while such a sum is not
// (--tf 1e308 gave an infinite makespan, NaN bubbles and a SimGrid "deadlock"); this bound leaves
// room for 10^7 actions and steps on top. Memory likewise: at most every microbatch's allocation.
constexpr double kLargestStepSum = 1e250;

void check_sums_finite(const Problem& problem) {
  double step = 0;
  double memory = 0;
  for (int i = 0; i < problem.stages(); ++i) {
    const double a2a = problem.t_a2a.empty() ? 0 : problem.t_a2a[static_cast<std::size_t>(i)];
    const std::size_t k = static_cast<std::size_t>(i);
    step += problem.microbatches * (problem.t_f[k] + problem.t_b[k] + problem.t_w[k] + problem.t_bw[k] +
                                    2 * problem.t_comm[k] + 2 * a2a);
    if (!problem.t_dp_reduce.empty()) step += problem.t_dp_reduce[k];
    if (!problem.t_offload.empty()) step += 2.0 * problem.microbatches * problem.t_offload[k];
    memory += problem.microbatches * (std::abs(problem.mem_f[k]) + std::abs(problem.mem_b[k]) + std::abs(problem.mem_w[k]));
  }
  for (double t : problem.t_opt) step += t;
  step += problem.devices * problem.t_reduce_hop;
  if (!(step <= kLargestStepSum)) {
    throw InputError(fmt::format(
        "problem: the times add up to {:g} per step (m x every stage's t_f + t_b + t_w + t_bw + transfers and copies, the "
        "optimizer and the reduction): above {:g}, where the engines' sums would overflow (give times in a larger "
        "unit)",
        step, kLargestStepSum));
  }
  if (!(memory <= kLargestStepSum)) {
    throw InputError(fmt::format("problem: the memory of all microbatches adds up to {:g} (m x every stage's |mem_f| "
                                 "+ |mem_b| + |mem_w|): above {:g}, where the peaks would overflow",
                                 memory, kLargestStepSum));
  }
  if (!(problem.bytes_act * problem.microbatches * problem.stages() <= kLargestStepSum)) {
    throw InputError(fmt::format("problem: field 'bytes_act' is {:g}: with m = {} over {} stages the bytes sent add "
                                 "up above {:g}",
                                 problem.bytes_act, problem.microbatches, problem.stages(), kLargestStepSum));
  }
}

}  // namespace

void check_placement_chunks(Placement placement, int chunks, std::string_view context) {
  if (placement == Placement::linear && chunks != 1) {
    throw InputError(fmt::format("{}: placement 'linear' needs chunks = 1, got {}", context, chunks));
  }
  if (placement == Placement::vshape && chunks != 2) {
    throw InputError(fmt::format("{}: placement 'vshape' needs chunks = 2, got {}", context, chunks));
  }
  if (placement == Placement::bidirectional && chunks != 2) {
    throw InputError(fmt::format("{}: placement 'bidirectional' needs chunks = 2 (one per model copy), got {}",
                                 context, chunks));
  }
}

void Problem::validate() const {
  if (devices < 1) throw InputError(fmt::format("problem: field 'p' is {}: need at least 1 device", devices));
  if (microbatches < 1) {
    throw InputError(fmt::format("problem: field 'm' is {}: need at least 1 microbatch", microbatches));
  }
  if (chunks < 1) throw InputError(fmt::format("problem: field 'chunks' is {}: need at least 1", chunks));
  check_action_count(devices, chunks, microbatches, "problem");
  check_placement_chunks(placement, chunks, "problem");

  const int s = stages();
  check_array(t_f, "t_f", s, false, true);
  check_array(t_b, "t_b", s, false, true);
  check_array(t_w, "t_w", s, false, true);
  check_array(t_bw, "t_bw", s, false, true);
  check_array(t_comm, "t_comm", s, false, true);
  if (!t_a2a.empty()) check_array(t_a2a, "t_a2a", s, false, true);
  if (!(overlap >= 0 && overlap <= 1)) {
    throw InputError(fmt::format("problem: field 'overlap' is {}: expected a number in [0, 1]", overlap));
  }
  if (!(a2a_overlap >= 0 && a2a_overlap <= 1)) {
    throw InputError(fmt::format("problem: field 'a2a_overlap' is {}: expected a fraction in [0, 1]", a2a_overlap));
  }
  if (!(comm_sm_share >= 0 && comm_sm_share < 1)) {
    throw InputError(fmt::format("problem: field 'comm_sm_share' is {}: expected a fraction in [0, 1)", comm_sm_share));
  }
  check_array(mem_f, "mem_f", s, false, true);
  check_array(mem_b, "mem_b", s, true, true);
  check_array(mem_w, "mem_w", s, true, false);
  for (int i = 0; i < s; ++i) {
    const double sum = mem_f[i] + mem_b[i] + mem_w[i];
    if (std::abs(sum) > 1e-9 * std::max(1.0, std::abs(mem_f[i]))) {
      throw InputError(fmt::format(
          "problem: mem_f + mem_b + mem_w must be 0 (a microbatch frees what it allocates), "
          "stage {} has {} + {} + {} = {}",
          i, mem_f[i], mem_b[i], mem_w[i], sum));
    }
  }
  if (!t_offload.empty()) check_array(t_offload, "t_offload", s, false, true);
  if (!mem_offload.empty()) {
    check_array(mem_offload, "mem_offload", s, false, true);
    for (int i = 0; i < s; ++i) {
      if (mem_offload[i] > mem_f[i] * (1 + 1e-9)) {
        throw InputError(fmt::format("problem: field 'mem_offload' has {} at stage {}: more than the {} its F "
                                     "leaves (mem_f)",
                                     mem_offload[i], i, mem_f[i]));
      }
    }
  }
  if (!std::isfinite(bytes_act) || bytes_act < 0) {
    throw InputError(fmt::format("problem: field 'bytes_act' is {}: expected a number >= 0", bytes_act));
  }
  if (!t_opt.empty() && static_cast<int>(t_opt.size()) != devices) {
    throw InputError(fmt::format("problem: field 't_opt' has {} values, expected {} (one per device)", t_opt.size(),
                                 devices));
  }
  for (std::size_t d = 0; d < t_opt.size(); ++d) {
    if (!std::isfinite(t_opt[d]) || t_opt[d] < 0) {
      throw InputError(fmt::format("problem: field 't_opt' has value {} at device {}: expected a time >= 0", t_opt[d], d));
    }
  }
  if (!std::isfinite(t_reduce_hop) || t_reduce_hop < 0) {
    throw InputError(fmt::format("problem: field 't_reduce_hop' is {}: expected a time >= 0", t_reduce_hop));
  }
  if (!t_dp_reduce.empty() && static_cast<int>(t_dp_reduce.size()) != s) {
    throw InputError(fmt::format("problem: field 't_dp_reduce' has {} values, expected {} (one per stage)",
                                 t_dp_reduce.size(), s));
  }
  for (std::size_t stage = 0; stage < t_dp_reduce.size(); ++stage) {
    if (!std::isfinite(t_dp_reduce[stage]) || t_dp_reduce[stage] < 0) {
      throw InputError(fmt::format("problem: field 't_dp_reduce' has value {} at stage {}: expected a time >= 0",
                                   t_dp_reduce[stage], stage));
    }
  }
  if (!(dp_reduce_overlap >= 0 && dp_reduce_overlap <= 1)) {
    throw InputError(fmt::format("problem: field 'dp_reduce_overlap' is {}: expected a fraction in [0, 1]",
                                 dp_reduce_overlap));
  }
  if (mem_limit && (!std::isfinite(mem_limit->value) || mem_limit->value <= 0)) {
    throw InputError(fmt::format("problem: field 'mem_limit' is {}: expected > 0", mem_limit->to_string()));
  }
  check_sums_finite(*this);
}

void require_vshape(const Problem& problem, std::string_view generator) {
  if (problem.chunks == 2 && problem.placement == Placement::vshape) return;
  throw InputError(fmt::format("{}: needs --chunks 2 --placement vshape, got chunks={} placement={}", generator,
                               problem.chunks, placement_name(problem.placement)));
}

}  // namespace zb
