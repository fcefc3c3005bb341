// Branch and bound over in-order schedules: one pass at a time, cut by a per-device program and dominance.
#include "sim/solver/detail/ilp_order_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "sim/support/error.h"
#include "sim/solver/head_chain.h"
#include "sim/solver/detail/list_timing.h"
#include "sim/solver/detail/split_pass.h"

namespace zb {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kUnknown = -1;
std::size_t idx(int i) { return static_cast<std::size_t>(i); }

// A partial schedule: per device how many F, B and W it has, the pass it is committed to whose
// input is not timed yet (-1: none; counted in f/b/w), its clock (the end of its last timed pass),
// and the end times of every timed F and B.
struct Node {
  std::vector<int> f, b, w, pending;
  std::vector<double> clock;
  std::vector<double> end_f, end_b;  // [s * m + i], kUnknown until timed
};

class Search {
 public:
  Search(const Problem& problem, double incumbent_span, const OrderSearchOptions& options)
      : problem_(problem), options_(options), p_(problem.devices), m_(problem.microbatches),
        best_(incumbent_span), start_time_(std::chrono::steady_clock::now()) {
    for (int s = 0; s < p_; ++s) {
      cost_[0].push_back(problem.t_f[idx(s)]);
      cost_[1].push_back(problem.t_b[idx(s)]);
      cost_[2].push_back(problem.t_w[idx(s)]);
      delta_[0].push_back(problem.mem_f[idx(s)]);
      delta_[1].push_back(problem.mem_b[idx(s)]);
      delta_[2].push_back(problem.mem_w[idx(s)]);
      comm_.push_back(s + 1 < p_ ? problem.comm_after(s) : 0.0);
    }
    // c_s: the first start of every device, F0's forward chain (the first pass is always F0).
    first_start_.assign(idx(p_), 0.0);
    for (int s = 1; s < p_; ++s) first_start_[idx(s)] = first_start_[idx(s - 1)] + cost_[0][idx(s - 1)] + comm_[idx(s - 1)];
    // From the start of F_i on s to the earliest start of B_i there.
    trip_.assign(idx(p_), 0.0);
    for (int s = 0; s < p_; ++s) trip_[idx(s)] = return_trip(problem, s);
    // b_needed_[s * m + i]: how many B must have run on s before F_i fits the limit (m + 1: never).
    b_needed_.assign(idx(p_ * m_), 0);
    for (int s = 0; s < p_ && options.memory_limit >= 0; ++s) {
      const double freed = std::max(0.0, -delta_[1][idx(s)]) + std::max(0.0, -delta_[2][idx(s)]);
      for (int i = 0; i < m_; ++i) {
        const double excess = (i + 1) * delta_[0][idx(s)] - options.memory_limit - 1e-9;
        if (excess <= 0) continue;
        const double count = freed > 0 ? std::ceil(excess / freed) : m_ + 1.0;
        b_needed_[idx(s * m_ + i)] = static_cast<int>(std::min<double>(count, i + 1));
      }
    }
    scale_ = std::max(1.0, std::abs(incumbent_span));
    update_goal();
    const auto side = idx(m_ + 1);
    table_.assign(side * side * side, kInf);
  }

  OrderSearchResult run() {
    Node root;
    root.f.assign(idx(p_), 0);
    root.b = root.w = root.f;
    root.pending.assign(idx(p_), -1);
    root.clock.assign(idx(p_), 0.0);
    root.end_f.assign(idx(p_ * m_), kUnknown);
    root.end_b = root.end_f;
    stack_.assign(idx(3 * p_ * m_ + 1), root);
    path_.assign(idx(3 * p_ * m_), {0, 0});
    const double goal = goal_;
    goal_ = kInf;  // the whole bound, not just enough of it to cut
    root_bound_ = bound(root);
    goal_ = goal;
    dfs(0);
    OrderSearchResult result;
    result.complete = !stopped_nodes_ && !stopped_clock_;
    result.stopped_by_nodes = stopped_nodes_;
    result.stopped_by_wall_clock = stopped_clock_;
    result.nodes = nodes_;
    result.work = work_;
    result.span = best_;
    result.root_bound = root_bound_;
    result.better = better_;
    return result;
  }

 private:
  double& at(int f, int b, int w) {
    const auto side = idx(m_ + 1);
    return table_[(idx(f) * side + idx(b)) * side + idx(w)];
  }
  int timed(const Node& node, int s, int kind) const {
    const int count = of_pass(split_pass(kind), node.f[idx(s)], node.b[idx(s)], node.w[idx(s)]);
    return count - (node.pending[idx(s)] == kind ? 1 : 0);
  }
  double memory(int s, int f, int b, int w) const {
    return f * delta_[0][idx(s)] + b * delta_[1][idx(s)] + w * delta_[2][idx(s)];
  }
  bool fits(int s, int f, int b, int w, int kind) const {
    if (options_.memory_limit < 0 || delta_[kind][idx(s)] <= 0) return true;  // peaks follow passes that add memory
    return memory(s, f, b, w) <= options_.memory_limit + 1e-9;
  }
  void update_goal() {
    // A span counts only when it is at most `goal_`: one grid step below the best, or strictly
    // below it off the grid.
    goal_ = options_.step > 0 ? best_ - options_.step + 1e-9 * scale_ : best_ - 1e-9 * scale_;
  }

  // The input time of pass (kind, i) on s (including the transfer), or kUnknown while its
  // producer on a neighbouring device is not timed. Own passes it needs are always timed: they
  // run earlier on the same device.
  double ready_time(const Node& node, int s, int kind, int i) const {
    if (kind == 0) {
      if (s == 0) return 0.0;
      const double input = node.end_f[idx((s - 1) * m_ + i)];
      return input < 0 ? kUnknown : input + comm_[idx(s - 1)];
    }
    if (kind == 1) {
      const double own = node.end_f[idx(s * m_ + i)];
      if (s + 1 == p_) return own;
      const double input = node.end_b[idx((s + 1) * m_ + i)];
      return input < 0 ? kUnknown : std::max(own, input + comm_[idx(s)]);
    }
    return node.end_b[idx(s * m_ + i)];
  }

  void time_pass(Node& node, int s, int kind, int i, double ready) {
    const double end = std::max(node.clock[idx(s)], ready) + cost_[kind][idx(s)];
    node.clock[idx(s)] = end;
    if (kind == 0) node.end_f[idx(s * m_ + i)] = end;
    if (kind == 1) node.end_b[idx(s * m_ + i)] = end;
  }

  // Appends `kind` to device s's order; times it now if its input is known, else commits the
  // device to it. Then times every commitment whose input has become known.
  void apply(Node& node, int s, int kind) {
    int& count = of_pass(split_pass(kind), node.f[idx(s)], node.b[idx(s)], node.w[idx(s)]);
    const int i = count++;
    const double ready = ready_time(node, s, kind, i);
    if (ready < 0) {
      node.pending[idx(s)] = kind;
      return;
    }
    time_pass(node, s, kind, i, ready);
    for (bool changed = true; changed;) {
      changed = false;
      for (int r = 0; r < p_; ++r) {
        const int k = node.pending[idx(r)];
        if (k < 0) continue;
        const int j = timed(node, r, k);
        const double input = ready_time(node, r, k, j);
        if (input < 0) continue;
        node.pending[idx(r)] = -1;
        time_pass(node, r, k, j, input);
        changed = true;
      }
    }
  }

  // A lower bound on the largest device span of every completion of `node`. First, lower bounds
  // on the end of every F and B (timed ones exact): an untimed pass starts no earlier than its
  // device's clock, after the same kind's previous pass, after its input, and (for B_i) after the
  // device has run every F and B up to i that it has not yet. Then each device alone from its
  // state, as lower_bound.cpp's program over the remaining F/B/W counts: F_i released by the
  // device above, B_i by the device below and by F_i's earliest start plus the round trip.
  double bound(const Node& node) {
    est_f_.assign(idx(p_ * m_), 0.0);
    est_b_.assign(idx(p_ * m_), 0.0);
    // Each device's program raises the end bounds its neighbours' programs read: repeat until
    // nothing rises (every value stays a lower bound, so each round is valid on its own).
    double worst = 0;
    for (int round = 0; round < kMaxRounds; ++round) {
      raised_ = false;
      chain_bounds(node);
      worst = 0;
      for (int s = 0; s < p_; ++s) {
        worst = std::max(worst, stage_bound(node, s) - first_start_[idx(s)]);
        if (worst > goal_) return worst;
      }
      if (!raised_) break;
    }
    return worst;
  }

  // Raises a bound on an end time to `value` when that is higher (beyond rounding).
  void raise(double& bound_end, double value) {
    if (value > bound_end + 1e-9 * scale_) {
      bound_end = value;
      raised_ = true;
    }
  }

  // Lower bounds on the end of every F and B (timed ones exact): an untimed pass starts no
  // earlier than its device's clock, after the same kind's previous pass, after its input, and
  // (for B_i) after the device has run every F and B up to i that it has not yet.
  void chain_bounds(const Node& node) {
    // Microbatch by microbatch: F_i everywhere (it may wait for earlier B to free memory), then B_i.
    for (int i = 0; i < m_; ++i) {
      for (int s = 0; s < p_; ++s) {
        const double known = node.end_f[idx(s * m_ + i)];
        if (known >= 0) {
          est_f_[idx(s * m_ + i)] = known;
          continue;
        }
        double start = node.clock[idx(s)];
        if (i > 0) start = std::max(start, est_f_[idx(s * m_ + i - 1)]);
        if (s > 0) start = std::max(start, est_f_[idx((s - 1) * m_ + i)] + comm_[idx(s - 1)]);
        // Memory: F_i fits only after enough B (each with its W at best) freed what i+1 F hold
        // beyond the limit; F_i and those B run from the clock on.
        const int freeing = b_needed_[idx(s * m_ + i)];
        if (freeing > 0) {
          start = std::max(start, est_b_[idx(s * m_ + freeing - 1)]);
          const double machine = node.clock[idx(s)] + (i - timed(node, s, 0)) * cost_[0][idx(s)] +
                                 std::max(0, freeing - timed(node, s, 1)) * cost_[1][idx(s)];
          start = std::max(start, machine);
        }
        est_f_[idx(s * m_ + i)] = std::max(est_f_[idx(s * m_ + i)], start + cost_[0][idx(s)]);
      }
      for (int s = p_ - 1; s >= 0; --s) {
        const int f_timed = timed(node, s, 0), b_timed = timed(node, s, 1);
        const double known = node.end_b[idx(s * m_ + i)];
        if (known >= 0) {
          est_b_[idx(s * m_ + i)] = known;
          continue;
        }
        double start = std::max(node.clock[idx(s)], est_f_[idx(s * m_ + i)]);
        if (i > 0) start = std::max(start, est_b_[idx(s * m_ + i - 1)]);
        if (s + 1 < p_) start = std::max(start, est_b_[idx((s + 1) * m_ + i)] + comm_[idx(s)]);
        // B_0..B_i and F_0..F_i all run on this device from its clock on.
        const double machine = node.clock[idx(s)] + std::max(0, i + 1 - f_timed) * cost_[0][idx(s)] +
                               (i - b_timed) * cost_[1][idx(s)];
        est_b_[idx(s * m_ + i)] = std::max(est_b_[idx(s * m_ + i)], std::max(start, machine) + cost_[1][idx(s)]);
      }
    }
  }

  double stage_bound(const Node& node, int s) {
    const int f0 = timed(node, s, 0), b0 = timed(node, s, 1), w0 = timed(node, s, 2);
    if (w0 == m_) return node.clock[idx(s)];
    const double tf = cost_[0][idx(s)], tb = cost_[1][idx(s)], tw = cost_[2][idx(s)];
    f_start_.assign(idx(m_), kInf);
    for (int k = 0; k < f0; ++k) f_start_[idx(k)] = node.end_f[idx(s * m_ + k)] - tf;
    for (int f = f0; f <= m_; ++f) {
      work_ += static_cast<std::int64_t>(f - b0 + 1) * (f - w0 + 1);  // about the cells of this layer
      for (int b = b0; b <= f; ++b) {
        for (int w = w0; w <= b; ++w) {
          double best = f == f0 && b == b0 && w == w0 ? node.clock[idx(s)] : kInf;
          if (f > f0 && fits(s, f, b, w, 0)) {
            const double release = s > 0 ? est_f_[idx((s - 1) * m_ + f - 1)] + comm_[idx(s - 1)] : 0.0;
            best = std::min(best, std::max(at(f - 1, b, w), release) + tf);
          }
          if (b > b0 && fits(s, f, b, w, 1)) {
            const int k = b - 1;
            double release = f_start_[idx(k)] + trip_[idx(s)];
            if (s + 1 < p_) release = std::max(release, est_b_[idx((s + 1) * m_ + k)] + comm_[idx(s)]);
            best = std::min(best, std::max(at(f, b - 1, w), release) + tb);
          }
          if (w > w0 && fits(s, f, b, w, 2)) best = std::min(best, at(f, b, w - 1) + tw);
          at(f, b, w) = best;
        }
      }
      if (f < m_ && f >= f0) {
        const double release = s > 0 ? est_f_[idx((s - 1) * m_ + f)] + comm_[idx(s - 1)] : 0.0;
        double start = kInf;
        for (int b = b0; b <= f; ++b) {
          for (int w = w0; w <= b; ++w) {
            if (fits(s, f + 1, b, w, 0)) start = std::min(start, std::max(at(f, b, w), release));
          }
        }
        f_start_[idx(f)] = start;
      }
    }
    // In order, the j-th F and B here are microbatch j - 1's. Every completion passes through a
    // state with j of them done the moment the j-th ends, and reaches it no earlier than the
    // program's time for that state: the least over such states bounds that end.
    for (int j = f0 + 1; j <= m_; ++j) {
      double earliest = kInf;
      for (int b = b0; b <= j; ++b) {
        for (int w = w0; w <= b; ++w) earliest = std::min(earliest, at(j, b, w));
      }
      if (std::isfinite(earliest)) raise(est_f_[idx(s * m_ + j - 1)], earliest);
    }
    for (int j = b0 + 1; j <= m_; ++j) {
      double earliest = kInf;
      for (int f = std::max(j, f0); f <= m_; ++f) {
        for (int w = w0; w <= j; ++w) earliest = std::min(earliest, at(f, j, w));
      }
      if (std::isfinite(earliest)) raise(est_b_[idx(s * m_ + j - 1)], earliest);
    }
    return at(m_, m_, m_);
  }

  // Dominance: a node whose counts and commitments were seen with every clock and every pending
  // release (F ends the device below has not consumed, B ends the device above has not) no
  // later has no completion shorter than that node's best. Keeps a few time vectors per key.
  bool dominated(const Node& node) {
    std::string key;
    key.reserve(idx(4 * p_));
    times_.clear();
    for (int s = 0; s < p_; ++s) {
      key.push_back(static_cast<char>(node.f[idx(s)]));
      key.push_back(static_cast<char>(node.b[idx(s)]));
      key.push_back(static_cast<char>(node.w[idx(s)]));
      key.push_back(static_cast<char>(node.pending[idx(s)] + 1));
      times_.push_back(node.clock[idx(s)]);
    }
    for (int s = 0; s < p_; ++s) {
      if (s + 1 < p_) {
        for (int i = timed(node, s + 1, 0); i < timed(node, s, 0); ++i) times_.push_back(node.end_f[idx(s * m_ + i)]);
      }
      if (s > 0) {
        for (int i = timed(node, s - 1, 1); i < timed(node, s, 1); ++i) times_.push_back(node.end_b[idx(s * m_ + i)]);
      }
    }
    auto& seen = dominance_[key];
    for (const auto& old : seen) {
      bool all = old.size() == times_.size();
      for (std::size_t j = 0; all && j < old.size(); ++j) all = old[j] <= times_[j];
      if (all) return true;
    }
    if (stored_ >= kMaxStored) return false;
    // Drop what the new vector dominates, keep at most kPerKey (the oldest goes).
    seen.erase(std::remove_if(seen.begin(), seen.end(),
                              [&](const std::vector<double>& old) {
                                for (std::size_t j = 0; j < old.size(); ++j) {
                                  if (times_[j] > old[j]) return false;
                                }
                                return true;
                              }),
               seen.end());
    if (seen.size() >= kPerKey) seen.erase(seen.begin());
    seen.push_back(times_);
    ++stored_;
    return false;
  }

  // The earliest start pass (kind, i) on s can have, known or bounded from the neighbour's clock.
  double start_lower(const Node& node, int s, int kind, int i) const {
    const double ready = ready_time(node, s, kind, i);
    if (ready >= 0) return std::max(node.clock[idx(s)], ready);
    const int r = kind == 0 ? s - 1 : s + 1;
    const double producer = node.clock[idx(r)] + cost_[kind][idx(r)] + comm_[idx(std::min(s, r))];
    return std::max(node.clock[idx(s)], producer);
  }

  bool out_of_budget() {
    if (nodes_ >= options_.node_limit || work_ >= options_.work_limit) {
      stopped_nodes_ = true;
      return true;
    }
    if ((nodes_ & 255) == 0) {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_time_).count();
      if (elapsed > options_.time_limit_s) stopped_clock_ = true;
    }
    return stopped_clock_;
  }

  void record(int depth) {
    Schedule schedule;
    schedule.name = "zb-ilp";
    schedule.devices.assign(idx(p_), {});
    std::vector<int> counts(idx(3 * p_), 0);
    for (int d = 0; d < depth; ++d) {
      const auto [s, kind] = path_[idx(d)];
      const int i = counts[idx(3 * s + kind)]++;
      schedule.devices[idx(s)].push_back({split_pass(kind), i, 0});
    }
    const double span = list_timing(problem_, schedule).span;
    if (span <= goal_) {
      best_ = span;
      better_ = std::move(schedule);
      update_goal();
      if (best_ <= options_.lower_bound + 1e-9 * scale_) met_bound_ = true;  // nothing shorter exists
    }
  }

  void dfs(int depth) {
    if (stopped_nodes_ || stopped_clock_ || met_bound_) return;
    ++nodes_;
    if (out_of_budget()) return;
    const Node& node = stack_[idx(depth)];
    if (depth == 3 * p_ * m_) {
      if (std::all_of(node.pending.begin(), node.pending.end(), [](int k) { return k < 0; })) record(depth);
      return;  // else a device still waits on another: a deadlock
    }
    if (bound(node) > goal_) return;
    if (dominated(node)) return;
    // Extend the free device with the earliest clock (a committed device waits for its input).
    int s = -1;
    for (int r = 0; r < p_; ++r) {
      if (node.pending[idx(r)] >= 0 || node.w[idx(r)] == m_) continue;
      if (s < 0 || node.clock[idx(r)] < node.clock[idx(s)]) s = r;
    }
    if (s < 0) return;  // every unfinished device waits on another: a deadlock
    const int f = node.f[idx(s)], b = node.b[idx(s)], w = node.w[idx(s)];
    int candidates[3];
    int count = 0;
    for (int kind : {1, 0, 2}) {  // B first: it frees memory and feeds the device above
      const bool allowed = kind == 0 ? f < m_ && fits(s, f + 1, b, w, 0)
                         : kind == 1 ? b < f && fits(s, f, b + 1, w, 1)
                                     : w < b && fits(s, f, b, w + 1, 2);
      if (allowed) candidates[count++] = kind;
    }
    // The pass that can start first goes first (ties: B, F, W): the search meets good orders early.
    double starts[3];
    for (int c = 0; c < count; ++c) {
      const int kind = candidates[c];
      starts[c] = start_lower(node, s, kind, kind == 0 ? f : kind == 1 ? b : w);
    }
    for (int c = 1; c < count; ++c) {
      for (int d = c; d > 0 && starts[d] < starts[d - 1]; --d) {
        std::swap(starts[d], starts[d - 1]);
        std::swap(candidates[d], candidates[d - 1]);
      }
    }
    for (int c = 0; c < count; ++c) {
      const int kind = candidates[c];
      // X is never needed first when a pass Y that frees memory (or holds it) could run and end
      // before X starts: Y moved in front of X delays nothing and lowers memory meanwhile.
      const double x_start = starts[c];
      bool dominated_first = false;
      for (int d = 0; d < count && !dominated_first; ++d) {
        const int other = candidates[d];
        if (other == kind || delta_[other][idx(s)] > 0 || cost_[other][idx(s)] <= 0) continue;
        const int j = other == 0 ? f : other == 1 ? b : w;
        const double ready = ready_time(node, s, other, j);
        if (ready >= 0 && std::max(node.clock[idx(s)], ready) + cost_[other][idx(s)] <= x_start) dominated_first = true;
      }
      if (dominated_first) continue;
      Node& child = stack_[idx(depth + 1)];
      child = stack_[idx(depth)];
      path_[idx(depth)] = {s, kind};
      apply(child, s, kind);
      dfs(depth + 1);
      if (stopped_nodes_ || stopped_clock_ || met_bound_) return;
    }
  }

  static constexpr std::size_t kPerKey = 6;
  // Rounds of bound(): each is valid alone; p=6, 7 m=2p at 1.25p take the same nodes and cells
  // with a cap of 3 as of 64, so the cap only bounds the cost of a node.
  static constexpr int kMaxRounds = 4;
  static constexpr std::size_t kMaxStored = 1'500'000;

  const Problem& problem_;
  OrderSearchOptions options_;
  int p_, m_;
  std::vector<double> cost_[3], delta_[3], comm_, first_start_, trip_;
  double best_, goal_ = 0, scale_ = 1, root_bound_ = 0;
  std::optional<Schedule> better_;
  std::chrono::steady_clock::time_point start_time_;
  std::int64_t nodes_ = 0, work_ = 0;
  bool stopped_nodes_ = false, stopped_clock_ = false, met_bound_ = false, raised_ = false;
  std::vector<Node> stack_;
  std::vector<std::pair<int, int>> path_;
  std::vector<double> table_, f_start_, est_f_, est_b_, times_;
  std::vector<int> b_needed_;
  std::unordered_map<std::string, std::vector<std::vector<double>>> dominance_;
  std::size_t stored_ = 0;
};

}  // namespace

OrderSearchResult search_in_order_schedules(const Problem& problem, double incumbent_span,
                                            const OrderSearchOptions& options) {
  if (problem.chunks != 1) throw InputError("zb-ilp order search: one chunk per device only");
  if (problem.microbatches > 250) throw InputError("zb-ilp order search: at most 250 microbatches");
  return Search(problem, incumbent_span, options).run();
}

}  // namespace zb
