// Valid lower bounds on the largest device span of any schedule (v = 1, split B and W).
#pragma once

#include <vector>

#include "sim/core/problem.h"

namespace zb {

struct SpanLowerBound {
  double span = 0;                  // max over stages of stage_bound
  std::vector<double> stage_bound;  // per stage: max(work + head and tail idle, flow)
  std::vector<double> head_idle;    // per stage
  std::vector<double> tail_idle;    // per stage
  std::vector<double> flow;         // per stage: the bound through a bottleneck stage below it
};

// Per stage s: work m (t_f + t_b + t_w) plus the head idle. From its first action until its
// first B can start, a stage can only run forwards: the first B needs its own F, the F of every
// stage below and the B of every stage below back, H_s = t_f[s] + sum_{k>s} (t_f + t_b) + 2 sum of
// the transfers in between; at most K_s = floor(limit / mem_f) forwards fit in memory, so the
// idle is at least H_s - min(K_s, m) t_f[s]. Symmetrically, after its last F a stage waits
// H_s - t_f[s] for that microbatch's B and can only fill the wait with pending B and W, whose
// amount the memory limit caps. And through any stage r below s: r starts no earlier than the
// forward chain allows, runs all its F and B before its last B, whose gradient then travels back
// to s (B on every stage between) before s can finish with B and W. `memory_limit` < 0 means
// unlimited.
SpanLowerBound span_lower_bound(const Problem& problem, double memory_limit);

// A stronger per-stage bound for the ILP's certificates: one stage alone as a single machine.
// Its state is how many F, B and W it has run (the memory after them follows from the counts);
// the k-th B can start no earlier than the k-th F started plus the round trip H_s (among the
// first k+1 B's, one belongs to a microbatch whose F is the k-th or later), nor before every
// stage r below has run k+1 F and B and that gradient has come back (the flow bound, per k). A
// dynamic program
// over the counts gives the earliest time of every state, hence the earliest start of the k-th
// F, hence the k-th B's release: the earliest end of the stage's last pass, measured from its
// first start, bounds its span. Valid for every order (microbatches of one stage are
// interchangeable, so counts are all that matter); memory_limit < 0 means unlimited. Returns the
// maximum over stages, 0 when m exceeds `max_microbatches` (the program has about m^3/6 states
// per stage).
double sequence_lower_bound(const Problem& problem, double memory_limit, int max_microbatches = 128);

// Several chunks per device (interleaved, vshape; also valid for one chunk): per device d, its
// work plus the idle at its head and tail, from its own first start. Head: until the first B on
// d can start, d runs only forwards (W needs B). That B, of some stage s on d, follows the F of
// the same microbatch on s, which started no earlier than d's first start, by the round trip
// H(s) = t_f[s] + sum over later stages k of (t_f + t_b) + 2 * the transfers from s on; so the
// head lasts at least H = min over d's stages of H(s), during which d runs at most the forwards
// that fit: at most m per stage and, with a limit, memory only grows (no B yet), so their mem_f
// sum stays within it (a fractional knapsack bounds their time from above). Tail: after d's last
// F, of stage s, the B of that microbatch on s waits H(s) - t_f[s] >= H - max t_f; meanwhile d can
// only run pending B and W, and each pending one holds memory (mem_f waiting for B, mem_f + mem_b
// waiting for W, the last F's microbatch mem_f), so a second knapsack bounds that filler work.
// Head and tail are disjoint unless every forward fits the limit at once, then only the larger
// counts. Bidirectional placement is not covered (InputError). memory_limit < 0: unlimited.
double chunked_lower_bound(const Problem& problem, double memory_limit);

}  // namespace zb
