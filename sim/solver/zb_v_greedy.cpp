// The greedy ZB-V scheduler (see zb_v_greedy.h). The algorithm is the official runtime's, read
// from its description (../shared/V-SCHEDULES.md) and re-derived here: a clock per device, passes
// placed one at a time in rounds, W used to fill the gaps before passes that must wait.
#include "sim/solver/detail/zb_v_greedy.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "sim/support/error.h"
#include "sim/core/memory.h"
#include "sim/solver/detail/split_pass.h"
#include "sim/solver/detail/time_grid.h"

namespace zb {

namespace {

// Which fill flag decides a wait's extra W (chunk 0's B always takes it).
enum class FillFlag { before_b = 0, before_f = 1, none = 2 };

// A candidate ran out of memory: no W is left to free any before a pass that must go next.
struct OutOfMemory {};
// A run's worst bubble reached the one it had to beat: it can no longer be kept.
struct CannotWin {};

constexpr Ticks kNothingToBeat = std::numeric_limits<Ticks>::max();

// One run's outcome on the time grid.
struct RunBubbles {
  std::vector<Ticks> bubble;  // per device
  Ticks worst = 0;
  Ticks span = 0;  // the longest device span, first start to last end (the evaluator's span)
};

// The scheduler's state; one object serves every run of a problem (candidates and refinements), so
// its tables are allocated once. Times are integers on the solvers' time grid (time_grid.h): a W
// that exactly fills a wait fills it whatever the time unit.
class VRun {
 public:
  VRun(const Problem& problem, const StageTicks& costs)
      : problem_(problem), p_(problem.devices), m_(problem.microbatches), clock_(ix(p_), 0), first_start_(ix(p_), 0), memory_(ix(p_), 0.0),
        bubble_(ix(p_), 0), b_reserve_(ix(p_), 0.0), pending_(ix(p_)), oldest_pending_(ix(p_), 0), count_(ix(p_)), order_(ix(p_)) {
    for (auto& per_pass : end_) {
      for (auto& per_chunk : per_pass) per_chunk.assign(ix(p_ * m_), 0);
    }
    // Costs, memory deltas and links looked up once: each run places 6pm passes.
    lanes_.resize(ix(p_));
    for (int d = 0; d < p_; ++d) {
      for (int chunk = 0; chunk < 2; ++chunk) {
        const auto s = ix(stage(d, chunk));
        Lane& lane = lanes_[ix(d)][ix(chunk)];
        lane.cost = {costs.f[s], costs.b[s], costs.w[s]};
        for (Pass pass : kSplitPasses) {
          lane.delta[ix(pass)] = memory_delta(problem, pass, static_cast<int>(s)).net();
        }
        b_reserve_[ix(d)] = std::max(b_reserve_[ix(d)], lane.delta[ix(Pass::B)]);
      }
      pending_[ix(d)].reserve(ix(2 * m_));
    }
    for (int chunk = 0; chunk < 2; ++chunk) {
      link_[ix(chunk)].assign(ix(p_), 0);
      for (int d = 0; d + 1 < p_; ++d) {
        link_[ix(chunk)][ix(d)] = costs.comm_after[ix(std::min(stage(d, chunk), stage(d + 1, chunk)))];
      }
    }
  }

  // One run; nullopt when it runs out of memory or its worst bubble reaches `to_beat`. Each device
  // may idle up to (the worst approved bubble - its own) without an extra W: the refinement hands
  // the previous run's bubbles in, so devices that idled less may idle more.
  std::optional<RunBubbles> run(double limit, ZbVFill fill, const std::vector<Ticks>* approved, Ticks to_beat) {
    limit_ = limit;
    fill_ = fill;
    to_beat_ = to_beat;
    approved_.assign(ix(p_), -1);
    if (approved) approved_ = *approved;
    max_approved_ = *std::max_element(approved_.begin(), approved_.end());
    std::fill(clock_.begin(), clock_.end(), 0);
    std::fill(memory_.begin(), memory_.end(), 0.0);
    std::fill(bubble_.begin(), bubble_.end(), 0);
    for (auto& pending : pending_) pending.clear();
    std::fill(oldest_pending_.begin(), oldest_pending_.end(), std::size_t{0});
    for (auto& counts : count_) counts = {};
    order_.resize(ix(p_));
    for (auto& order : order_) {
      order.clear();
      order.reserve(ix(6 * m_));
    }
    worst_bubble_ = 0;
    forwards_and_backwards_ = 0;
    decisions_.clear();
    try {
      place_all();
    } catch (const OutOfMemory&) {
      return std::nullopt;
    } catch (const CannotWin&) {
      return std::nullopt;
    }
    Ticks span = 0;
    for (int d = 0; d < p_; ++d) span = std::max(span, clock_[ix(d)] - first_start_[ix(d)]);
    return RunBubbles{bubble_, worst_bubble_, span};
  }

  // Whether a rerun with `approved` would repeat the last run pass for pass: the allowed idle
  // enters only the extra-W decisions, so it does when every one of them comes out the same
  // (everything before a decision is then the same too).
  bool rerun_would_repeat(const std::vector<Ticks>& approved) const {
    const Ticks max_approved = *std::max_element(approved.begin(), approved.end());
    for (const ExtraWDecision& decision : decisions_) {
      const Ticks allowed = std::max(decision.worst, max_approved - approved[ix(decision.device)]);
      if ((decision.gap > allowed - decision.bubble) != decision.extra) return false;
    }
    return true;
  }

  // The largest memory level any run since the last reset let through: every run since then goes
  // the same way under any limit from this level up to the one it had (the checks that passed
  // still pass, those that failed still fail), so the next limit that can change anything is
  // just below it.
  double accepted_level() const { return accepted_level_; }
  void reset_accepted_level() { accepted_level_ = 0; }

  // Whether any run since the last reset reached a decision that its fill flag before_b (0) or
  // before_f (1) decides. A run with the other value of a flag never consulted goes pass for pass
  // the same way (every other input is the same).
  const std::array<bool, 2>& consulted() const { return consulted_; }
  void reset_consulted() { consulted_ = {false, false}; }

  // Swaps the last run's per-device order (valid after a run that returned a result) with `into`,
  // whose buffers the next run reuses.
  void swap_order(std::vector<std::vector<Action>>& into) { std::swap(into, order_); }

 private:
  void place_all() {
    warm_up();
    // 2m rounds place every pass when costs are equal (the official scheduler's case). With other
    // costs a pass can come up before its input, where the official scheduler stops on an
    // assertion; here that device waits a round, and rounds go on until every pass is placed.
    for (int round = 0; forwards_and_backwards_ < p_ * 4 * m_; ++round) {
      const int before = forwards_and_backwards_;
      waited_for_memory_ = false;
      backward_step();
      forward_step();
      if (forwards_and_backwards_ == before && waited_for_memory_) throw OutOfMemory{};
      if (forwards_and_backwards_ == before) {
        throw Error(fmt::format("zb-v: internal error: no pass could be placed in round {}", round));
      }
    }
    for (int d = 0; d < p_; ++d) {
      while (has_pending(d)) put_w(d);
    }
  }

  static std::size_t ix(int i) { return static_cast<std::size_t>(i); }
  static std::size_t ix(Pass pass) { return static_cast<std::size_t>(split_index(pass)); }
  // The one memory check of a run; remembers the largest level it let through.
  bool fits(double level) {
    if (!fits_limit(level, limit_)) return false;
    accepted_level_ = std::max(accepted_level_, level);
    return true;
  }
  int count(int d, Pass pass, int chunk) const { return count_[ix(d)][ix(pass)][ix(chunk)]; }
  int stage(int d, int chunk) const { return problem_.stage_of(d, chunk); }
  Ticks cost(Pass pass, int chunk, int d) const { return lanes_[ix(d)][ix(chunk)].cost[ix(pass)]; }
  double delta(Pass pass, int chunk, int d) const { return lanes_[ix(d)][ix(chunk)].delta[ix(pass)]; }
  Ticks& end(Pass pass, int chunk, int d, int mb) { return end_[ix(pass)][ix(chunk)][ix(d * m_ + mb)]; }

  // The device this pass's input comes from: chunk 0's forward and chunk 1's backward travel up
  // the V's left arm (from d-1), the others down (from d+1); -1 at the V's ends.
  int upstream(Pass pass, int chunk, int d) const {
    const bool from_below = (pass == Pass::F) == (chunk == 0);
    const int up = from_below ? d - 1 : d + 1;
    return up >= 0 && up < p_ ? up : -1;
  }
  Ticks comm(int chunk, int d, int up) const { return link_[ix(chunk)][ix(std::min(d, up))]; }

  Ticks worst_allowed_bubble(int d) const { return std::max(worst_bubble_, max_approved_ - approved_[ix(d)]); }

  // Whether the next `pass` pass of `chunk` on d has its inputs placed: its own device's earlier
  // passes of the microbatch and the upstream device's pass.
  bool ready(Pass pass, int chunk, int d) const {
    const int mb = count(d, pass, chunk);
    bool ready = mb < m_;
    if (pass == Pass::F && chunk == 1) ready = ready && count(d, Pass::F, 0) > mb;
    if (pass == Pass::B && chunk == 1) ready = ready && count(d, Pass::F, 1) > mb;
    if (pass == Pass::B && chunk == 0) ready = ready && count(d, Pass::B, 1) > mb;
    if (pass == Pass::W) ready = ready && count(d, Pass::B, chunk) > mb;
    const int up = upstream(pass, chunk, d);
    if (pass != Pass::W && up >= 0) ready = ready && count(up, pass, chunk) > mb;
    return ready;
  }

  void put(Pass pass, int chunk, int d) {
    const int mb = count(d, pass, chunk);
    if (!ready(pass, chunk, d)) {
      throw Error(fmt::format("zb-v: internal error: {}{}.{} on d{} placed before its inputs", pass_name(pass), mb,
                              chunk, d));
    }
    const double change = delta(pass, chunk, d);
    if (!fits(memory_[ix(d)] + change)) throw OutOfMemory{};
    const Ticks no_wait = clock_[ix(d)] + cost(pass, chunk, d);
    Ticks finish = no_wait;
    const int up = upstream(pass, chunk, d);
    if (pass != Pass::W && up >= 0) {
      finish = std::max(finish, end(pass, chunk, up, mb) + comm(chunk, d, up) + cost(pass, chunk, d));
    }
    // Idle before a device's first forward is the pipeline's fill, not this device's bubble.
    if (count(d, Pass::F, 0) > 0 && finish > no_wait) {
      bubble_[ix(d)] += finish - no_wait;
      worst_bubble_ = std::max(worst_bubble_, bubble_[ix(d)]);
      // Bubbles only grow: this run can no longer be kept.
      if (worst_bubble_ >= to_beat_) throw CannotWin{};
    }
    if (pass != Pass::W) end(pass, chunk, d, mb) = finish;
    if (order_[ix(d)].empty()) first_start_[ix(d)] = finish - cost(pass, chunk, d);
    clock_[ix(d)] = finish;
    memory_[ix(d)] += change;
    order_[ix(d)].push_back({pass, mb, chunk});
    if (pass == Pass::B) pending_[ix(d)].push_back(chunk);
    ++count_[ix(d)][ix(pass)][ix(chunk)];
    if (pass != Pass::W) ++forwards_and_backwards_;
  }

  bool has_pending(int d) const { return oldest_pending_[ix(d)] < pending_[ix(d)].size(); }
  int oldest_pending_chunk(int d) const { return pending_[ix(d)][oldest_pending_[ix(d)]]; }

  // The oldest pending W (each chunk's Ws come in microbatch order).
  void put_w(int d) {
    if (!has_pending(d)) throw OutOfMemory{};
    const int chunk = oldest_pending_chunk(d);
    ++oldest_pending_[ix(d)];
    put(Pass::W, chunk, d);
  }

  void make_room(int d, double change) {
    while (!fits(memory_[ix(d)] + change)) put_w(d);
  }

  // Ws into the time this pass would wait for its input: whole Ws while they end before it
  // arrives, then one more when the gap left is larger than the device may still idle.
  void fill_wait(Pass pass, int chunk, int d, bool allow_extra, FillFlag flag) {
    const int up = upstream(pass, chunk, d);
    // At the V's ends the input is local: nothing to wait for, nothing to fill.
    if (up < 0 || count(up, pass, chunk) <= count(d, pass, chunk)) return;
    const Ticks arrival = end(pass, chunk, up, count(d, pass, chunk)) + comm(chunk, d, up);
    while (has_pending(d) && arrival >= clock_[ix(d)] + cost(Pass::W, oldest_pending_chunk(d), d)) put_w(d);
    if (!has_pending(d)) return;
    if (flag != FillFlag::none) consulted_[static_cast<std::size_t>(flag)] = true;
    if (!allow_extra) return;
    const Ticks gap = arrival - clock_[ix(d)];
    const bool extra = gap > worst_allowed_bubble(d) - bubble_[ix(d)];
    decisions_.push_back({d, gap, bubble_[ix(d)], worst_bubble_, extra});
    if (extra) put_w(d);
  }

  // Whether an F of `chunk` on d that fits the limit also leaves room for the device's next B.
  // Always when B frees memory; else the F waits for a round in which a B comes first (the B fits:
  // the F before it left the room; its W then frees).
  bool leaves_room_for_b(int chunk, int d) {
    return b_reserve_[ix(d)] <= 0 || fits(memory_[ix(d)] + delta(Pass::F, chunk, d) + b_reserve_[ix(d)]);
  }

  void warm_up() {
    for (int d = 0; d < p_; ++d) put(Pass::F, 0, d);
    // From the V's bottom up: device i takes chunk-0 forwards (devices below it too, so they stay
    // ahead) while they fit in memory and end before chunk 1's first forward reaches it.
    for (int i = p_ - 1; i >= 0; --i) {
      if (i < p_ - 1) {
        const Ticks arrival = end(Pass::F, 1, i + 1, 0) + comm(1, i, i + 1);
        while (fits(memory_[ix(i)] + delta(Pass::F, 0, i) * (2 + 2 * i) + b_reserve_[ix(i)]) &&
               clock_[ix(i)] + cost(Pass::F, 0, i) <= arrival && count(i, Pass::F, 0) < m_) {
          for (int j = 0; j <= i; ++j) put(Pass::F, 0, j);
        }
      }
      put(Pass::F, 1, i);
    }
    // Balance: each device holds no fewer forwards than the one below it, alternating chunks.
    int chunk = 0;
    for (int i = 1; i < p_; ++i) {
      auto behind = [&] {
        const int mine = count(i, Pass::F, 0) + count(i, Pass::F, 1);
        const int below = count(i - 1, Pass::F, 0) + count(i - 1, Pass::F, 1);
        return mine < below || (count(i, Pass::F, 1) <= count(i - 1, Pass::F, 1) && count(i - 1, Pass::F, 1) < m_);
      };
      int idle_passes = 0;
      while (behind()) {
        bool placed = false;
        for (int j = p_ - 1; j >= i; --j) {
          if (ready(Pass::F, chunk, j) && leaves_room_for_b(chunk, j)) {
            put(Pass::F, chunk, j);
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
    if (count(d, Pass::B, 0) >= count(d, Pass::B, 1)) return 1;
    if (d == p_ - 1) return 0;
    const bool upstream_done = count(d + 1, Pass::B, 0) > count(d, Pass::B, 0);
    return upstream_done || count(d, Pass::B, 1) >= m_ ? 0 : 1;
  }

  void backward_step() {
    std::vector<int>& chunk0 = chunk0_backwards_;
    std::vector<int>& chunk1 = chunk1_backwards_;
    chunk0.clear();
    chunk1.clear();
    for (int d = 0; d < p_; ++d) {
      if (count(d, Pass::B, 0) + count(d, Pass::B, 1) == 2 * m_) continue;
      make_room(d, std::max(delta(Pass::B, 0, d), delta(Pass::B, 1, d)));
      (next_backward_chunk(d) == 0 ? chunk0 : chunk1).push_back(d);
    }
    // Chunk 0's backwards travel down (high devices first), then chunk 1's up (low first).
    std::reverse(chunk0.begin(), chunk0.end());
    for (int d : chunk0) {
      if (!ready(Pass::B, 0, d)) continue;
      fill_wait(Pass::B, 0, d, true, FillFlag::none);
      put(Pass::B, 0, d);
    }
    for (int d : chunk1) {
      if (!ready(Pass::B, 1, d)) continue;
      fill_wait(Pass::B, 1, d, fill_.before_b, FillFlag::before_b);
      put(Pass::B, 1, d);
    }
  }

  // Which forward a device runs next; -1: none is ready this round.
  int next_forward_chunk(int d) const {
    if (count(d, Pass::F, 1) >= count(d, Pass::F, 0)) return 0;
    if (d == p_ - 1 || count(d + 1, Pass::F, 1) > count(d, Pass::F, 1)) return 1;
    if (count(d, Pass::F, 0) < m_ && (d == 0 || count(d - 1, Pass::F, 0) > count(d, Pass::F, 0))) return 0;
    return -1;
  }

  void forward_step() {
    for (int d = 0; d < p_; ++d) {
      if (count(d, Pass::F, 1) >= m_) continue;
      const int chunk = next_forward_chunk(d);
      if (chunk < 0 || !ready(Pass::F, chunk, d)) continue;
      make_room(d, delta(Pass::F, chunk, d));
      while (!leaves_room_for_b(chunk, d) && has_pending(d)) put_w(d);
      if (!leaves_room_for_b(chunk, d)) {
        waited_for_memory_ = true;
        continue;
      }
      fill_wait(Pass::F, chunk, d, fill_.before_f, FillFlag::before_f);
      put(Pass::F, chunk, d);
    }
  }

  const Problem& problem_;
  int p_;
  int m_;
  double limit_ = 0;
  double accepted_level_ = 0;
  ZbVFill fill_;
  Ticks to_beat_ = kNothingToBeat;
  std::vector<Ticks> clock_;
  std::vector<Ticks> first_start_;  // when the device's first pass starts
  std::vector<double> memory_;
  std::vector<Ticks> bubble_;
  // What the device's next B adds before any W can free (mem_b > 0, the executor's model; 0 when B
  // frees, the paper's): an F must leave that much room, or the device holding 2p chunk activations
  // could run neither its B nor, with no W pending, anything else.
  std::vector<double> b_reserve_;
  // Chunks of the Bs in placement order; those from oldest_pending_ on still wait for their W.
  std::vector<std::vector<int>> pending_;
  std::vector<std::size_t> oldest_pending_;
  std::vector<int> chunk0_backwards_, chunk1_backwards_;  // backward_step's devices, kept for their capacity
  // [device][split_index(pass)][chunk]: passes placed
  std::vector<std::array<std::array<int, 2>, kSplitPassCount>> count_;
  std::array<std::array<std::vector<Ticks>, 2>, 2> end_;  // [split_index(pass): F, B][chunk][device * m + mb]
  std::vector<std::vector<Action>> order_;
  struct Lane {
    std::array<Ticks, kSplitPassCount> cost{};    // per pass F/B/W on this device's stage of the chunk
    std::array<double, kSplitPassCount> delta{};  // memory, likewise
  };
  std::vector<std::array<Lane, 2>> lanes_;  // [device][chunk]
  std::array<std::vector<Ticks>, 2> link_;  // [chunk][d]: transfer between d and d+1
  std::vector<Ticks> approved_;
  Ticks max_approved_ = -1;
  Ticks worst_bubble_ = 0;  // the largest of bubble_ (bubbles only grow)
  int forwards_and_backwards_ = 0;
  bool waited_for_memory_ = false;  // this round an F waited for room for its device's next B
  std::array<bool, 2> consulted_{};  // see consulted()
  // Every extra-W decision of the run, with what it compared (see rerun_would_repeat).
  struct ExtraWDecision {
    int device = 0;
    Ticks gap = 0, bubble = 0, worst = 0;
    bool extra = false;
  };
  std::vector<ExtraWDecision> decisions_;
};

// A candidate's best run with its order, on the grid.
struct Candidate {
  RunBubbles bubbles;
  std::vector<std::vector<Action>> order;
  ZbVFill fill;
};

// One candidate with its refinement: rerun with the last kept run's bubbles as the idle each
// device is allowed, while the worst bubble drops. A rerun is kept only when strictly better, so
// it is given up as soon as its worst bubble reaches the kept one's (nothing beats zero), and not
// run at all when it would repeat the kept run. Afterwards runner.consulted() tells which fill
// flags any of its runs consulted.
std::optional<Candidate> refined_candidate(VRun& runner, double limit, ZbVFill fill) {
  runner.reset_consulted();
  std::optional<RunBubbles> first = runner.run(limit, fill, nullptr, kNothingToBeat);
  if (!first) return std::nullopt;
  Candidate best{std::move(*first), {}, fill};
  runner.swap_order(best.order);
  while (best.bubbles.worst > 0 && !runner.rerun_would_repeat(best.bubbles.bubble)) {
    std::optional<RunBubbles> next = runner.run(limit, fill, &best.bubbles.bubble, best.bubbles.worst);
    if (!next) break;
    best.bubbles = std::move(*next);
    runner.swap_order(best.order);
  }
  return best;
}

ZbVResult to_result(Candidate candidate, const TimeGrid& grid, double limit) {
  ZbVResult result;
  result.schedule = Schedule::empty("zb-v", static_cast<int>(candidate.order.size()));
  result.schedule.devices = std::move(candidate.order);
  result.worst_bubble = grid.time(candidate.bubbles.worst);
  for (Ticks bubble : candidate.bubbles.bubble) result.bubble.push_back(grid.time(bubble));
  result.memory_limit = limit;
  result.fill = candidate.fill;
  return result;
}

// The official procedure at one limit: the four candidates (fill before B x fill before F, true
// first), the first strictly smallest worst bubble kept; nullopt when none fits. A candidate whose
// flags differ from one already run only in flags none of that one's runs consulted repeats it
// run for run (the same result, or the same failure), and a repeat is never strictly smaller, so
// it is not run: below the limit's top level the four mostly fail in the warm-up, before any flag
// is consulted, and with equal costs often none is.
std::optional<Candidate> official_at(VRun& runner, double limit) {
  std::optional<Candidate> best;
  struct Tried {
    ZbVFill fill;
    std::array<bool, 2> consulted;
  };
  std::vector<Tried> tried;
  auto repeats = [&](ZbVFill fill) {
    return std::any_of(tried.begin(), tried.end(), [&](const Tried& t) {
      return (t.fill.before_b == fill.before_b || !t.consulted[0]) && (t.fill.before_f == fill.before_f || !t.consulted[1]);
    });
  };
  for (bool before_b : {true, false}) {
    for (bool before_f : {true, false}) {
      if (best && best->bubbles.worst <= 0) return best;  // the first strictly smallest is kept: done
      const ZbVFill fill{before_b, before_f};
      if (repeats(fill)) continue;
      std::optional<Candidate> candidate = refined_candidate(runner, limit, fill);
      tried.push_back({fill, runner.consulted()});
      if (candidate && (!best || candidate->bubbles.worst < best->bubbles.worst)) best = std::move(candidate);
    }
  }
  return best;
}

// The descent below the limit stops after this many levels in a row that found no shorter span
// than the best so far (while nothing fits, it goes on).
// Each level is a whole official procedure (O(p m) per run), and below the limit the spans mostly
// grow level after level (with m < p by a fixed step per level, down through about 2p levels):
// unbounded, the descent made zb-v O(p^2 m), over 60 s at p = 256, m < p.
constexpr int kDescentPatience = 8;

// No device's span (first start to last end) is shorter than its work.
Ticks span_bound(const Problem& problem, const StageTicks& costs) {
  Ticks bound = 0;
  for (int d = 0; d < problem.devices; ++d) {
    Ticks work = 0;
    for (int chunk = 0; chunk < 2; ++chunk) {
      const auto s = static_cast<std::size_t>(problem.stage_of(d, chunk));
      work += costs.f[s] + costs.b[s] + costs.w[s];
    }
    bound = std::max(bound, problem.microbatches * work);
  }
  return bound;
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
  const TimeGrid grid(problem);
  VRun runner(problem, stage_ticks(problem, grid));
  std::optional<Candidate> best = refined_candidate(runner, memory_limit, fill);
  if (!best) return std::nullopt;
  return to_result(std::move(*best), grid, memory_limit);
}

ZbVResult zb_v_greedy(const Problem& problem, std::optional<double> memory_limit) {
  require_vshape(problem, "zb-v");
  const double limit = zb_v_memory_limit(problem, memory_limit);
  const TimeGrid grid(problem);
  const StageTicks costs = stage_ticks(problem, grid);
  VRun runner(problem, costs);
  std::optional<Candidate> best = official_at(runner, limit);
  // Monotone in the limit: a schedule made under a smaller limit fits this one too, so the
  // official procedure is also run at every smaller limit where it goes differently (just below
  // the largest level it let through), and a shorter span found there wins. At the limit itself
  // the official choice (smallest worst bubble) stands unless strictly beaten on span. The descent
  // stops when nothing fits any more or the span reaches a bound no schedule can beat.
  const Ticks no_span_below = span_bound(problem, costs);
  int without_gain = 0;
  for (double level = runner.accepted_level();
       level > 0 && (!best || best->bubbles.span > no_span_below) && without_gain < kDescentPatience;) {
    double below = level / (1 + 1e-9);
    while (fits_limit(level, below)) below = std::nextafter(below, 0.0);
    runner.reset_accepted_level();
    std::optional<Candidate> lower = official_at(runner, below);
    level = runner.accepted_level();
    if (best) ++without_gain;  // until something fits, every level is worth trying
    if (lower && (!best || lower->bubbles.span < best->bubbles.span)) {
      best = std::move(lower);
      without_gain = 0;
    }
  }
  if (!best) {
    throw ScheduleError(fmt::format(
        "zb-v: no schedule fits the memory limit {:g} ({:g} M_B): the greedy ZB-V warm-up needs more; "
        "raise --mem-limit (1F1B's memory is {:g}) or use v-auto, which goes down to a third of it",
        limit, limit / problem.activation_unit(), problem.devices * problem.activation_unit()));
  }
  return to_result(std::move(*best), grid, limit);
}

}  // namespace zb
