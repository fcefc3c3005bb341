// The head lower bound: forwards are all a stage can run before its first gradient comes back.
#include "sim/solver/detail/lower_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/support/error.h"
#include "sim/solver/head_chain.h"

namespace zb {

namespace {

// After the last F on stage s ends, the B of that microbatch needs `round_trip` (the F and B of
// every stage below and the transfers) before it can start. Meanwhile the stage can only run the
// B and W still pending, and pending work holds memory: a microbatch waiting for B holds mem_f,
// one waiting for W holds mem_f + mem_b, and the last F's own microbatch holds mem_f. So the work
// that can fill the gap is a small knapsack under the limit; the rest of the gap is idle.
double tail_idle_bound(const Problem& problem, int s, double round_trip, double memory_limit) {
  const auto si = static_cast<std::size_t>(s);
  const double hold_b = problem.mem_f[si];
  const double hold_w = problem.mem_f[si] + problem.mem_b[si];
  if (memory_limit < 0 || hold_b <= 0 || hold_w <= 0) return 0.0;
  const int others = problem.microbatches - 1;
  const double capacity = memory_limit - hold_b;
  if (capacity < 0) return 0.0;
  const double t_b = problem.t_b[si];
  const double t_w = problem.t_w[si];
  double best = 0;
  const int max_a = std::min(others, static_cast<int>(std::floor(capacity / hold_b + 1e-9)));
  for (int a = 0; a <= max_a; ++a) {  // a: waiting for B (and W); b: waiting for W only
    const double left = capacity - a * hold_b;
    const int b = std::min(others - a, static_cast<int>(std::floor(left / hold_w + 1e-9)));
    best = std::max(best, a * (t_b + t_w) + std::max(0, b) * t_w);
  }
  return std::max(0.0, round_trip - best);
}

// A stage below s as the bottleneck: measured from the first action of stage s, stage r >= s
// cannot start before the forward chain reaches it, must then run all its F and B before its last
// B, and that gradient must still travel back to s, where its B and W follow. Holds for every
// schedule (no microbatch order assumed): all F precede their B, so all precede the last B.
double downstream_flow_bound(const Problem& problem, int s) {
  auto at = [](const std::vector<double>& values, int k) { return values[static_cast<std::size_t>(k)]; };
  const int m = problem.microbatches;
  double forward = 0;   // from the start of stage s to the earliest start of stage r
  double backward = 0;  // from the end of the last B on stage r to the end of its B on stage s
  double best = 0;
  for (int r = s; r < problem.stages(); ++r) {
    if (r > s) {
      forward += at(problem.t_f, r - 1) + problem.comm_after(r - 1);
      backward += problem.comm_after(r - 1) + at(problem.t_b, r - 1);
    }
    const double through_r = forward + m * (at(problem.t_f, r) + at(problem.t_b, r)) + backward;
    best = std::max(best, through_r + at(problem.t_w, s));
  }
  return best;
}

double stage_sequence_bound(const Problem& problem, int s, double memory_limit) {
  const auto si = static_cast<std::size_t>(s);
  const int m = problem.microbatches;
  const double cost[3] = {problem.t_f[si], problem.t_b[si], problem.t_w[si]};
  const double delta[3] = {problem.mem_f[si], problem.mem_b[si], problem.mem_w[si]};
  const double trip = return_trip(problem, s);
  const double inf = std::numeric_limits<double>::infinity();
  const auto side = static_cast<std::size_t>(m + 1);
  // earliest[(f * side + b) * side + w]: the earliest time f F, b B and w W can all be done.
  std::vector<double> earliest(side * side * side, inf);
  auto at = [&](int f, int b, int w) -> double& {
    return earliest[(static_cast<std::size_t>(f) * side + static_cast<std::size_t>(b)) * side + static_cast<std::size_t>(w)];
  };
  std::vector<double> f_start(side, inf);  // earliest start of the k-th F (0-based)
  // The k-th B also waits for the stages below: a stage r > s starts no earlier than the forward
  // chain from s reaches it, runs k+1 F and B before the (k+1)-th gradient leaves it, and that
  // gradient crosses the stages between back to s (the flow bound, per k).
  std::vector<double> downstream(side, 0.0);
  {
    double forward = 0, backward = 0;
    for (int r = s + 1; r < problem.stages(); ++r) {
      const auto below = static_cast<std::size_t>(r - 1);
      forward += problem.t_f[below] + problem.comm_after(r - 1);
      if (r - 1 > s) backward += problem.t_b[below];
      backward += problem.comm_after(r - 1);
      const double per = problem.t_f[static_cast<std::size_t>(r)] + problem.t_b[static_cast<std::size_t>(r)];
      for (int k = 0; k < m; ++k) {
        downstream[static_cast<std::size_t>(k)] = std::max(downstream[static_cast<std::size_t>(k)], forward + (k + 1) * per + backward);
      }
    }
  }
  auto fits = [&](int f, int b, int w, int kind) {
    if (memory_limit < 0 || delta[kind] <= 0) return true;  // peaks follow passes that add memory
    return f * delta[0] + b * delta[1] + w * delta[2] <= memory_limit + 1e-9;
  };
  at(0, 0, 0) = 0;
  for (int f = 0; f <= m; ++f) {
    for (int b = 0; b <= f; ++b) {
      for (int w = 0; w <= b; ++w) {
        double& best = at(f, b, w);
        if (f > 0 && fits(f, b, w, 0)) best = std::min(best, at(f - 1, b, w) + cost[0]);
        if (b > 0 && fits(f, b, w, 1)) {
          const auto k = static_cast<std::size_t>(b - 1);
          const double release = std::max(f_start[k] + trip, downstream[k]);
          best = std::min(best, std::max(at(f, b - 1, w), release) + cost[1]);
        }
        if (w > 0 && fits(f, b, w, 2)) best = std::min(best, at(f, b, w - 1) + cost[2]);
      }
    }
    if (f < m) {
      double start = inf;
      for (int b = 0; b <= f; ++b) {
        for (int w = 0; w <= b; ++w) {
          if (fits(f + 1, b, w, 0)) start = std::min(start, at(f, b, w));  // the F must fit after it
        }
      }
      f_start[static_cast<std::size_t>(f)] = start;
    }
  }
  return at(m, m, m);
}

// The largest total time of items (time, memory, count) that fit `capacity` in memory: the
// fractional knapsack, best time per memory first, an upper bound on the integral one. Items
// that hold no memory count in full.
struct KnapsackItem {
  double time = 0;
  double memory = 0;
  double count = 0;
};
double most_work_within(std::vector<KnapsackItem> items, double capacity) {
  double total = 0;
  for (const KnapsackItem& item : items) {
    if (item.memory <= 0) total += item.time * item.count;
  }
  std::sort(items.begin(), items.end(),
            [](const KnapsackItem& a, const KnapsackItem& b) { return a.time * b.memory > b.time * a.memory; });
  for (const KnapsackItem& item : items) {
    if (item.memory <= 0 || capacity <= 0) continue;
    const double taken = std::min(item.count, capacity / item.memory);
    total += taken * item.time;
    capacity -= taken * item.memory;
  }
  return total;
}

}  // namespace

double chunked_lower_bound(const Problem& problem, double memory_limit) {
  if (problem.placement == Placement::bidirectional) {
    throw InputError("chunked_lower_bound: bidirectional placement (two model copies) is not covered");
  }
  const int stages = problem.stages();
  const double m = problem.microbatches;
  auto at = [](const std::vector<double>& values, int s) { return values[static_cast<std::size_t>(s)]; };
  std::vector<double> trip(static_cast<std::size_t>(stages), 0.0);
  for (int s = 0; s < stages; ++s) trip[static_cast<std::size_t>(s)] = return_trip(problem, s);
  const bool limited = memory_limit >= 0;
  double best = 0;
  for (int d = 0; d < problem.devices; ++d) {
    double work = 0, head = std::numeric_limits<double>::infinity(), largest_f = 0, all_forwards_memory = 0;
    std::vector<KnapsackItem> forwards, pending;
    for (int c = 0; c < problem.chunks; ++c) {
      const int s = problem.stage_of(d, c);
      work += m * (at(problem.t_f, s) + at(problem.t_b, s) + at(problem.t_w, s));
      head = std::min(head, at(trip, s));
      largest_f = std::max(largest_f, at(problem.t_f, s));
      forwards.push_back({at(problem.t_f, s), limited ? at(problem.mem_f, s) : 0.0, m});
      all_forwards_memory += m * std::max(0.0, at(problem.mem_f, s));
      // Waiting for B holds mem_f; waiting for W holds mem_f + mem_b (no less than nothing).
      pending.push_back({at(problem.t_b, s) + at(problem.t_w, s), std::max(0.0, at(problem.mem_f, s)), m});
      pending.push_back({at(problem.t_w, s), std::max(0.0, at(problem.mem_f, s) + at(problem.mem_b, s)), m});
    }
    const double head_idle = std::max(0.0, head - most_work_within(forwards, limited ? memory_limit : 0.0));
    double tail_idle = 0;
    if (limited) {
      // The last F's own microbatch holds at least the smallest mem_f of d's stages.
      double own = std::numeric_limits<double>::infinity();
      for (int c = 0; c < problem.chunks; ++c) own = std::min(own, std::max(0.0, at(problem.mem_f, problem.stage_of(d, c))));
      bool free_filler = false;  // a pending pass that holds no memory: the filler is unbounded
      for (const KnapsackItem& item : pending) free_filler = free_filler || item.memory <= 0;
      if (!free_filler) tail_idle = std::max(0.0, head - largest_f - most_work_within(pending, memory_limit - own));
    }
    const bool all_fit = !limited || all_forwards_memory <= memory_limit + 1e-9;
    const double idle = all_fit ? std::max(head_idle, tail_idle) : head_idle + tail_idle;
    best = std::max(best, work + idle);
  }
  return best;
}

double sequence_lower_bound(const Problem& problem, double memory_limit, int max_microbatches) {
  if (problem.microbatches > max_microbatches) return 0.0;
  double best = 0;
  for (int s = 0; s < problem.stages(); ++s) {
    const double stage = stage_sequence_bound(problem, s, memory_limit);
    if (std::isfinite(stage)) best = std::max(best, stage);
  }
  return best;
}

SpanLowerBound span_lower_bound(const Problem& problem, double memory_limit) {
  const int p = problem.stages();
  const int m = problem.microbatches;
  auto at = [](const std::vector<double>& values, int s) { return values[static_cast<std::size_t>(s)]; };
  SpanLowerBound bound;
  bound.stage_bound.assign(static_cast<std::size_t>(p), 0.0);
  bound.head_idle.assign(static_cast<std::size_t>(p), 0.0);
  bound.tail_idle.assign(static_cast<std::size_t>(p), 0.0);
  bound.flow.assign(static_cast<std::size_t>(p), 0.0);
  for (int s = p - 1; s >= 0; --s) {
    const double head = return_trip(problem, s);
    double fit = m;
    const double mem_f = at(problem.mem_f, s);
    if (memory_limit >= 0 && mem_f > 0) fit = std::min<double>(m, std::floor(memory_limit / mem_f + 1e-9));
    fit = std::max(fit, 1.0);
    const double head_idle = std::max(0.0, head - fit * at(problem.t_f, s));
    const double tail_idle = tail_idle_bound(problem, s, head - at(problem.t_f, s), memory_limit);
    const double work = m * (at(problem.t_f, s) + at(problem.t_b, s) + at(problem.t_w, s));
    // The head interval ends at the first B, the tail interval starts after the last F: they
    // are disjoint when not every F fits before the first B; otherwise only the larger counts.
    const double idle = fit < m ? head_idle + tail_idle : std::max(head_idle, tail_idle);
    const double flow = downstream_flow_bound(problem, s);
    bound.head_idle[static_cast<std::size_t>(s)] = head_idle;
    bound.tail_idle[static_cast<std::size_t>(s)] = tail_idle;
    bound.flow[static_cast<std::size_t>(s)] = flow;
    bound.stage_bound[static_cast<std::size_t>(s)] = std::max(work + idle, flow);
    bound.span = std::max(bound.span, bound.stage_bound[static_cast<std::size_t>(s)]);
  }
  return bound;
}

}  // namespace zb
