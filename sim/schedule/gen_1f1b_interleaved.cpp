// Megatron-LM's interleaved 1F1B: v chunks per device on a looped placement, m a multiple of p.
#include <fmt/format.h>

#include <algorithm>

#include "sim/schedule/error.h"
#include "sim/schedule/generators.h"

namespace zb {

namespace {

// Megatron walks microbatches in groups of p: all chunks of a group before the next group.
Action nth_pass(int k, int p, int v, Pass pass) {
  const int in_round = k % (p * v);
  const int chunk = in_round / p;
  const int microbatch = (k / (p * v)) * p + k % p;
  return {pass, microbatch, pass == Pass::F ? chunk : v - 1 - chunk};
}

}  // namespace

Schedule make_1f1b_interleaved(const Problem& problem) {
  const int p = problem.devices;
  const int m = problem.microbatches;
  const int v = problem.chunks;
  if (v < 2) throw InputError(fmt::format("1f1b-i: needs --chunks >= 2 (got {})", v));
  if (problem.placement != Placement::interleaved) {
    throw InputError(fmt::format("1f1b-i: needs the interleaved placement (got {})",
                                 placement_name(problem.placement)));
  }
  if (m % p != 0) {
    throw InputError(fmt::format("1f1b-i: m must be a multiple of p (Megatron's interleaved schedule), "
                                 "got m={} p={}",
                                 m, p));
  }
  const int total = m * v;
  Schedule schedule = Schedule::empty("1f1b-i", p);
  for (int r = 0; r < p; ++r) {
    auto& actions = schedule.devices[r];
    // With m == p Megatron runs every forward first: there is no steady state to pair them with.
    const int warmup = m == p ? total : std::min((p - r - 1) * 2 + (v - 1) * p, total);
    for (int k = 0; k < warmup; ++k) actions.push_back(nth_pass(k, p, v, Pass::F));
    for (int k = 0; k < total - warmup; ++k) {
      actions.push_back(nth_pass(warmup + k, p, v, Pass::F));
      actions.push_back(nth_pass(k, p, v, Pass::BW));
    }
    for (int k = total - warmup; k < total; ++k) actions.push_back(nth_pass(k, p, v, Pass::BW));
  }
  return schedule;
}

}  // namespace zb
