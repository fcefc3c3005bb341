// The greedy ZB-V scheduler (see zb_v_greedy.h). The algorithm is the official runtime's, read
// from its description (../shared/V-SCHEDULES.md) and re-derived here: a clock per device, passes
// placed one at a time in rounds, W used to fill the gaps before passes that must wait.
#include "sim/solver/zb_v_greedy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <deque>

#include "sim/schedule/error.h"
#include "sim/schedule/memory.h"

namespace zb {

namespace {

enum Cat { kF = 0, kB = 1, kW = 2 };

constexpr Pass kPassOf[3] = {Pass::F, Pass::B, Pass::W};

// A candidate ran out of memory: no W is left to free any before a pass that must go next.
struct OutOfMemory {};

class VRun {
 public:
  VRun(const Problem& problem, double limit, ZbVFill fill, const std::vector<double>* approved)
      : problem_(problem), limit_(limit), fill_(fill), p_(problem.devices), m_(problem.microbatches),
        clock_(static_cast<std::size_t>(p_), 0.0), memory_(clock_), bubble_(clock_), pending_(clock_.size()),
        count_(clock_.size()), order_(clock_.size()) {
    for (auto& per_cat : end_) {
      for (auto& per_chunk : per_cat) per_chunk.assign(static_cast<std::size_t>(p_ * m_), 0.0);
    }
    // Costs, memory deltas and links looked up once: each run places 6pm passes.
    lanes_.resize(ix(p_));
    for (int d = 0; d < p_; ++d) {
      for (int chunk = 0; chunk < 2; ++chunk) {
        const auto s = ix(stage(d, chunk));
        Lane& lane = lanes_[ix(d)][ix(chunk)];
        lane.cost = {problem.t_f[s], problem.t_b[s], problem.t_w[s]};
        for (int cat = 0; cat < 3; ++cat) {
          lane.delta[ix(cat)] = memory_delta(problem, kPassOf[cat], static_cast<int>(s)).net();
        }
      }
      order_[ix(d)].reserve(ix(6 * m_));
    }
    for (int chunk = 0; chunk < 2; ++chunk) {
      link_[ix(chunk)].assign(ix(p_), 0.0);
      for (int d = 0; d + 1 < p_; ++d) {
        link_[ix(chunk)][ix(d)] = problem.comm_after(std::min(stage(d, chunk), stage(d + 1, chunk)));
      }
    }
    // Each device may idle up to (the worst approved bubble - its own) without an extra W: the
    // refinement hands the previous run's bubbles in, so devices that idled less may idle more.
    approved_ = approved ? *approved : std::vector<double>(clock_.size(), -1.0);
    max_approved_ = *std::max_element(approved_.begin(), approved_.end());
  }

  void run() {
    warm_up();
    // 2m rounds place every pass when costs are equal (the official scheduler's case). With other
    // costs a pass can come up before its input, where the official scheduler stops on an
    // assertion; here that device waits a round, and rounds go on until every pass is placed.
    for (int round = 0; forwards_and_backwards_ < p_ * 4 * m_; ++round) {
      const int before = forwards_and_backwards_;
      backward_step();
      forward_step();
      if (forwards_and_backwards_ == before) {
        throw Error(fmt::format("zb-v: internal error: no pass could be placed in round {}", round));
      }
    }
    for (int d = 0; d < p_; ++d) {
      while (!pending_[ix(d)].empty()) put_w(d);
    }
  }

  ZbVResult result() && {
    ZbVResult result;
    result.schedule = Schedule::empty("zb-v", p_);
    result.schedule.devices = std::move(order_);
    result.worst_bubble = worst_bubble_;
    result.bubble = std::move(bubble_);
    result.memory_limit = limit_;
    result.fill = fill_;
    return result;
  }

 private:
  static std::size_t ix(int i) { return static_cast<std::size_t>(i); }
  int count(int d, int cat, int chunk) const { return count_[ix(d)][ix(cat)][ix(chunk)]; }
  int stage(int d, int chunk) const { return problem_.stage_of(d, chunk); }
  double cost(int cat, int chunk, int d) const { return lanes_[ix(d)][ix(chunk)].cost[ix(cat)]; }
  double delta(int cat, int chunk, int d) const { return lanes_[ix(d)][ix(chunk)].delta[ix(cat)]; }
  double& end(int cat, int chunk, int d, int mb) { return end_[ix(cat)][ix(chunk)][ix(d * m_ + mb)]; }

  // The device this pass's input comes from: chunk 0's forward and chunk 1's backward travel up
  // the V's left arm (from d-1), the others down (from d+1); -1 at the V's ends.
  int upstream(int cat, int chunk, int d) const {
    const bool from_below = (cat == kF) == (chunk == 0);
    const int up = from_below ? d - 1 : d + 1;
    return up >= 0 && up < p_ ? up : -1;
  }
  double comm(int chunk, int d, int up) const { return link_[ix(chunk)][ix(std::min(d, up))]; }

  double worst_allowed_bubble(int d) const { return std::max(worst_bubble_, max_approved_ - approved_[ix(d)]); }

  // Whether the next `cat` pass of `chunk` on d has its inputs placed: its own device's earlier
  // passes of the microbatch and the upstream device's pass.
  bool ready(int cat, int chunk, int d) const {
    const int mb = count(d, cat, chunk);
    bool ready = mb < m_;
    if (cat == kF && chunk == 1) ready = ready && count(d, kF, 0) > mb;
    if (cat == kB && chunk == 1) ready = ready && count(d, kF, 1) > mb;
    if (cat == kB && chunk == 0) ready = ready && count(d, kB, 1) > mb;
    if (cat == kW) ready = ready && count(d, kB, chunk) > mb;
    const int up = upstream(cat, chunk, d);
    if (cat != kW && up >= 0) ready = ready && count(up, cat, chunk) > mb;
    return ready;
  }

  void put(int cat, int chunk, int d) {
    const int mb = count(d, cat, chunk);
    if (!ready(cat, chunk, d)) {
      throw Error(fmt::format("zb-v: internal error: {}{}.{} on d{} placed before its inputs", "FBW"[cat], mb,
                              chunk, d));
    }
    const double change = delta(cat, chunk, d);
    if (!fits_limit(memory_[ix(d)] + change, limit_)) throw OutOfMemory{};
    const double no_wait = clock_[ix(d)] + cost(cat, chunk, d);
    double finish = no_wait;
    const int up = upstream(cat, chunk, d);
    if (cat != kW && up >= 0) finish = std::max(finish, end(cat, chunk, up, mb) + comm(chunk, d, up) + cost(cat, chunk, d));
    // Idle before a device's first forward is the pipeline's fill, not this device's bubble.
    if (count(d, kF, 0) > 0) {
      bubble_[ix(d)] += finish - no_wait;
      worst_bubble_ = std::max(worst_bubble_, bubble_[ix(d)]);
    }
    if (cat != kW) end(cat, chunk, d, mb) = finish;
    clock_[ix(d)] = finish;
    memory_[ix(d)] += change;
    order_[ix(d)].push_back({kPassOf[cat], mb, chunk});
    if (cat == kB) pending_[ix(d)].push_back(chunk);
    ++count_[ix(d)][ix(cat)][ix(chunk)];
    if (cat != kW) ++forwards_and_backwards_;
  }

  // The oldest pending W (each chunk's Ws come in microbatch order).
  void put_w(int d) {
    if (pending_[ix(d)].empty()) throw OutOfMemory{};
    const int chunk = pending_[ix(d)].front();
    pending_[ix(d)].pop_front();
    put(kW, chunk, d);
  }

  void make_room(int d, double change) {
    while (!fits_limit(memory_[ix(d)] + change, limit_)) put_w(d);
  }

  // Ws into the time this pass would wait for its input: whole Ws while they end before it
  // arrives, then one more when the gap left is larger than the device may still idle.
  void fill_wait(int cat, int chunk, int d, bool allow_extra) {
    const int up = upstream(cat, chunk, d);
    // At the V's ends the input is local: nothing to wait for, nothing to fill.
    if (up < 0 || count(up, cat, chunk) <= count(d, cat, chunk)) return;
    auto& pending = pending_[ix(d)];
    const double arrival = end(cat, chunk, up, count(d, cat, chunk)) + comm(chunk, d, up);
    while (!pending.empty() && arrival >= clock_[ix(d)] + cost(kW, pending.front(), d)) put_w(d);
    if (allow_extra && !pending.empty() && arrival - clock_[ix(d)] > worst_allowed_bubble(d) - bubble_[ix(d)]) {
      put_w(d);
    }
  }

  void warm_up() {
    for (int d = 0; d < p_; ++d) put(kF, 0, d);
    // From the V's bottom up: device i takes chunk-0 forwards (devices below it too, so they stay
    // ahead) while they fit in memory and end before chunk 1's first forward reaches it.
    for (int i = p_ - 1; i >= 0; --i) {
      if (i < p_ - 1) {
        const double arrival = end(kF, 1, i + 1, 0) + comm(1, i, i + 1);
        while (fits_limit(memory_[ix(i)] + delta(kF, 0, i) * (2 + 2 * i), limit_) &&
               clock_[ix(i)] + cost(kF, 0, i) <= arrival && count(i, kF, 0) < m_) {
          for (int j = 0; j <= i; ++j) put(kF, 0, j);
        }
      }
      put(kF, 1, i);
    }
    // Balance: each device holds no fewer forwards than the one below it, alternating chunks.
    int chunk = 0;
    for (int i = 1; i < p_; ++i) {
      auto behind = [&] {
        const int mine = count(i, kF, 0) + count(i, kF, 1);
        const int below = count(i - 1, kF, 0) + count(i - 1, kF, 1);
        return mine < below || (count(i, kF, 1) <= count(i - 1, kF, 1) && count(i - 1, kF, 1) < m_);
      };
      int idle_passes = 0;
      while (behind()) {
        bool placed = false;
        for (int j = p_ - 1; j >= i; --j) {
          if (ready(kF, chunk, j)) {
            put(kF, chunk, j);
            placed = true;
          }
        }
        chunk = 1 - chunk;
        idle_passes = placed ? 0 : idle_passes + 1;
        // Neither chunk has a ready forward (only with unequal costs): the rounds take over.
        if (idle_passes > 1) break;
      }
    }
  }

  // Which backward a device runs next (chunks in model terms: chunk 1's backward comes first).
  int next_backward_chunk(int d) const {
    if (count(d, kB, 0) >= count(d, kB, 1)) return 1;
    if (d == p_ - 1) return 0;
    const bool upstream_done = count(d + 1, kB, 0) > count(d, kB, 0);
    return upstream_done || count(d, kB, 1) >= m_ ? 0 : 1;
  }

  void backward_step() {
    std::vector<int> chunk0, chunk1;
    for (int d = 0; d < p_; ++d) {
      if (count(d, kB, 0) + count(d, kB, 1) == 2 * m_) continue;
      make_room(d, std::max(delta(kB, 0, d), delta(kB, 1, d)));
      (next_backward_chunk(d) == 0 ? chunk0 : chunk1).push_back(d);
    }
    // Chunk 0's backwards travel down (high devices first), then chunk 1's up (low first).
    std::reverse(chunk0.begin(), chunk0.end());
    for (int d : chunk0) {
      if (!ready(kB, 0, d)) continue;
      fill_wait(kB, 0, d, true);
      put(kB, 0, d);
    }
    for (int d : chunk1) {
      if (!ready(kB, 1, d)) continue;
      fill_wait(kB, 1, d, fill_.before_b);
      put(kB, 1, d);
    }
  }

  // Which forward a device runs next; -1: none is ready this round.
  int next_forward_chunk(int d) const {
    if (count(d, kF, 1) >= count(d, kF, 0)) return 0;
    if (d == p_ - 1 || count(d + 1, kF, 1) > count(d, kF, 1)) return 1;
    if (count(d, kF, 0) < m_ && (d == 0 || count(d - 1, kF, 0) > count(d, kF, 0))) return 0;
    return -1;
  }

  void forward_step() {
    for (int d = 0; d < p_; ++d) {
      if (count(d, kF, 1) >= m_) continue;
      const int chunk = next_forward_chunk(d);
      if (chunk < 0 || !ready(kF, chunk, d)) continue;
      make_room(d, delta(kF, chunk, d));
      fill_wait(kF, chunk, d, fill_.before_f);
      put(kF, chunk, d);
    }
  }

  const Problem& problem_;
  double limit_;
  ZbVFill fill_;
  int p_;
  int m_;
  std::vector<double> clock_, memory_, bubble_;
  std::vector<std::deque<int>> pending_;               // chunks of the Bs whose W is still to run
  std::vector<std::array<std::array<int, 2>, 3>> count_;  // [device][cat][chunk]: passes placed
  std::array<std::array<std::vector<double>, 2>, 2> end_;  // [cat F/B][chunk][device * m + mb]
  std::vector<std::vector<Action>> order_;
  struct Lane {
    std::array<double, 3> cost{}, delta{};  // per cat F/B/W on this device's stage of the chunk
  };
  std::vector<std::array<Lane, 2>> lanes_;           // [device][chunk]
  std::array<std::vector<double>, 2> link_;          // [chunk][d]: transfer between d and d+1
  std::vector<double> approved_;
  double max_approved_ = -1;
  double worst_bubble_ = 0;  // the largest of bubble_ (bubbles only grow)
  int forwards_and_backwards_ = 0;
};

std::optional<ZbVResult> run_once(const Problem& problem, double limit, ZbVFill fill,
                                  const std::vector<double>* approved) {
  VRun run(problem, limit, fill, approved);
  try {
    run.run();
  } catch (const OutOfMemory&) {
    return std::nullopt;
  }
  return std::move(run).result();
}

}  // namespace

double zb_v_memory_limit(const Problem& problem, std::optional<double> limit) {
  if (!limit) limit = problem.memory_limit();
  if (!limit) return problem.devices * problem.activation_unit();
  if (!std::isfinite(*limit) || *limit <= 0) {
    throw InputError(fmt::format("zb-v: memory limit must be a positive number, got {}", *limit));
  }
  return *limit;
}

std::optional<ZbVResult> zb_v_candidate(const Problem& problem, double memory_limit, ZbVFill fill) {
  require_vshape(problem, "zb-v");
  std::optional<ZbVResult> best = run_once(problem, memory_limit, fill, nullptr);
  // A rerun is kept only when strictly better: nothing beats a zero bubble.
  while (best && best->worst_bubble > 0) {
    std::optional<ZbVResult> next = run_once(problem, memory_limit, fill, &best->bubble);
    if (!next || !(next->worst_bubble < best->worst_bubble)) break;
    best = std::move(next);
  }
  return best;
}

ZbVResult zb_v_greedy(const Problem& problem, std::optional<double> memory_limit) {
  require_vshape(problem, "zb-v");
  const double limit = zb_v_memory_limit(problem, memory_limit);
  std::optional<ZbVResult> best;
  for (bool before_b : {true, false}) {
    for (bool before_f : {true, false}) {
      if (best && best->worst_bubble <= 0) break;  // the first strictly smallest is kept: done
      std::optional<ZbVResult> candidate = zb_v_candidate(problem, limit, {before_b, before_f});
      if (candidate && (!best || candidate->worst_bubble < best->worst_bubble)) best = std::move(candidate);
    }
  }
  if (!best) {
    throw ScheduleError(fmt::format(
        "zb-v: no schedule fits the memory limit {:g} ({:g} M_B): the greedy ZB-V warm-up needs more; "
        "raise --mem-limit (1F1B's memory is {:g}) or use v-auto, which goes down to a third of it",
        limit, limit / problem.activation_unit(), problem.devices * problem.activation_unit()));
  }
  return *std::move(best);
}

}  // namespace zb
