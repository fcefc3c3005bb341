// The interleaved (looped) family, v chunks per device: Megatron-LM's interleaved 1F1B and the
// interleaved zero-bubble schedule PyTorch ships (ScheduleInterleavedZeroBubble). Microbatches go
// in rounds: all chunks of a round before the next round. Megatron's rounds are p microbatches (m a
// multiple of p); PyTorch's flexible rounds, used here for any m, are m / max(1, m / p) microbatches.
#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "sim/support/error.h"
#include "sim/core/generators/generators.h"

namespace zb {

namespace {

// Microbatches per round; m must split into max(1, m / p) equal rounds.
int microbatches_per_round(const Problem& problem, const char* name) {
  const int p = problem.devices;
  const int m = problem.microbatches;
  const int v = problem.chunks;
  if (v < 2) throw InputError(fmt::format("{}: needs --chunks >= 2 (got {})", name, v));
  if (problem.placement != Placement::interleaved) {
    throw InputError(fmt::format("{}: needs the interleaved placement (got {})", name,
                                 placement_name(problem.placement)));
  }
  const int rounds = std::max(1, m / p);
  if (m % rounds != 0) {
    throw InputError(fmt::format("{}: m={} does not split into {} equal rounds (max(1, m / p) with p={}): "
                                 "use m <= p, a multiple of p, or an m that {} divides",
                                 name, m, rounds, p, rounds));
  }
  return m / rounds;
}

// The k-th forward (or backward) of a device: rounds of `per_round` microbatches, chunk by chunk;
// backwards take the chunks in reverse.
Action nth_pass(int k, int per_round, int v, Pass pass) {
  const int chunk = (k / per_round) % v;
  const int microbatch = (k / (per_round * v)) * per_round + k % per_round;
  return {pass, microbatch, pass == Pass::F ? chunk : v - 1 - chunk};
}


// Megatron's interleaved order; with ep_overlap (overlap_moe_expert_parallel_comm) each device
// warms up with one more forward, so that a steady-state forward never waits on the backward it is
// paired with, and each forward and the backward after it run as one overlapped block.
Schedule interleaved_1f1b(const Problem& problem, const char* name, bool ep_overlap) {
  const int per_round = microbatches_per_round(problem, name);
  const int p = problem.devices;
  const int m = problem.microbatches;
  const int v = problem.chunks;
  const int total = m * v;
  Schedule schedule = Schedule::empty(name, p);
  for (int r = 0; r < p; ++r) {
    auto& actions = schedule.devices[r];
    // With m == p Megatron runs every forward first: there is no steady state to pair them with.
    const int warmup =
        m == p ? total : std::min((p - r - 1) * 2 + (v - 1) * per_round + (ep_overlap ? 1 : 0), total);
    for (int k = 0; k < warmup; ++k) actions.push_back(nth_pass(k, per_round, v, Pass::F));
    for (int k = 0; k < total - warmup; ++k) {
      actions.push_back(nth_pass(warmup + k, per_round, v, Pass::F));
      actions.back().overlap_next = ep_overlap;
      actions.push_back(nth_pass(k, per_round, v, Pass::BW));
    }
    for (int k = total - warmup; k < total; ++k) actions.push_back(nth_pass(k, per_round, v, Pass::BW));
  }
  return schedule;
}

}  // namespace

Schedule make_1f1b_interleaved(const Problem& problem) { return interleaved_1f1b(problem, "1f1b-i", false); }

Schedule make_1f1b_interleaved_ep_overlap(const Problem& problem) {
  return interleaved_1f1b(problem, "1f1b-i-a2a", true);
}


Schedule make_zb_interleaved(const Problem& problem) {
  const int per_round = microbatches_per_round(problem, "zb-i");
  const int p = problem.devices;
  const int v = problem.chunks;
  const int total = problem.microbatches * v;
  Schedule schedule = Schedule::empty("zb-i", p);
  for (int r = 0; r < p; ++r) {
    auto& actions = schedule.devices[r];
    // One warm-up forward per hop to the last device (not 1F1B's two: B alone is on the way back),
    // and device r defers its Ws by r backwards, into the time it would wait for gradients.
    const int warmup = std::min((p - r - 1) + (v - 1) * per_round, total);
    std::deque<Action> pending_w;
    auto backward = [&](int k) {
      const Action b = nth_pass(k, per_round, v, Pass::B);
      actions.push_back(b);
      pending_w.push_back({Pass::W, b.microbatch, b.chunk});
      if (k >= r) {
        actions.push_back(pending_w.front());
        pending_w.pop_front();
      }
    };
    for (int k = 0; k < warmup; ++k) actions.push_back(nth_pass(k, per_round, v, Pass::F));
    for (int k = 0; k < total - warmup; ++k) {
      actions.push_back(nth_pass(warmup + k, per_round, v, Pass::F));
      backward(k);
    }
    for (int k = total - warmup; k < total; ++k) backward(k);
    actions.insert(actions.end(), pending_w.begin(), pending_w.end());
  }
  return schedule;
}

}  // namespace zb
