// The memory-aware greedy heuristic: warm-up, one round per microbatch, W in the gaps, W tail.
#include "sim/solver/detail/greedy_schedule.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "sim/support/error.h"
#include "sim/core/memory.h"
#include "sim/core/validator.h"
#include "sim/core/generators/generators.h"
#include "sim/solver/detail/list_timing.h"
#include "sim/solver/detail/lower_bound.h"
#include "sim/solver/detail/split_1f1b.h"
#include "sim/solver/detail/time_grid.h"
#include "sim/solver/detail/split_pass.h"

namespace zb {

std::string GreedySwitches::to_string() const {
  return fmt::format("bubble-before-first-b{} prioritize-b{} greedy-gap-fill{}",
                     allow_bubble_before_first_b ? '+' : '-', prioritize_b ? '+' : '-',
                     greedy_gap_fill ? '+' : '-');
}

std::array<GreedySwitches, 8> greedy_variants() {
  std::array<GreedySwitches, 8> variants;
  int index = 0;
  for (bool bubble : {true, false}) {
    for (bool prio : {true, false}) {
      for (bool greedy : {true, false}) {
        variants[static_cast<std::size_t>(index++)] = GreedySwitches{bubble, prio, greedy};
      }
    }
  }
  return variants;
}

namespace {

// Thrown inside one variant when memory cannot be freed, or when it can no longer end shorter
// than the span to beat; the variant is dropped.
struct OutOfMemory {};
struct CannotWin {};

constexpr Ticks kNothingToBeat = std::numeric_limits<Ticks>::max();

// What one variant at one limit gave.
struct VariantRun {
  bool done = false;  // false: out of memory, or it could not beat the span given
  Ticks span = 0;     // on the time grid
  // The largest memory level a fits test accepted: every limit from this level up to the one the
  // run had gives the same run, so the next limit worth trying is just below it.
  double accepted_level = 0;
};

// The state of a run: per stage (= device, v = 1) clock, memory, idle, counts and end times,
// the times on the time grid. One object runs variant after variant in the same buffers.
class GreedyRun {
 public:
  GreedyRun(const Problem& problem, const StageTicks& costs)
      : problem_(problem), costs_(costs), p_(problem.devices), m_(problem.microbatches) {
    const auto stages = static_cast<std::size_t>(p_);
    end_f_.assign(stages, std::vector<Ticks>(static_cast<std::size_t>(m_), 0));
    end_b_ = end_f_;
    order_.assign(stages, {});
    for (auto& list : order_) list.reserve(static_cast<std::size_t>(3 * m_));
    // From the end of an F on stage s to its gradient's arrival back: F and B on every stage
    // below, each boundary crossed twice.
    round_trip_.assign(stages, 0);
    for (int s = p_ - 2; s >= 0; --s) {
      round_trip_[idx(s)] = round_trip_[idx(s + 1)] + costs_.f[idx(s + 1)] + costs_.b[idx(s + 1)] +
                            2 * costs_.comm_after[idx(s)];
    }
  }

  // One variant under `memory_limit`, given up as soon as it cannot end shorter than `to_beat`.
  // The end times need no reset: each is written before it is read.
  VariantRun run(double memory_limit, const GreedySwitches& switches, Ticks to_beat) {
    limit_ = memory_limit;
    sw_ = switches;
    to_beat_ = to_beat;
    const auto stages = static_cast<std::size_t>(p_);
    clock_.assign(stages, 0);
    memory_.assign(stages, 0.0);
    idle_.assign(stages, 0);
    count_.assign(stages, {0, 0, 0});
    for (auto& list : order_) list.clear();
    max_idle_ = 0;
    accepted_level_ = 0;
    VariantRun result;
    try {
      warm_up();
      give_up_if_it_cannot_win();
      for (int i = 1; i < m_; ++i) {
        steady_round(i);
        give_up_if_it_cannot_win();
      }
      for (int s = 0; s < p_; ++s) {
        while (nw(s) < m_) put(s, Pass::W);
      }
      for (int s = 0; s < p_; ++s) result.span = std::max(result.span, clock_[idx(s)] - first_start(s));
      result.done = true;
    } catch (const OutOfMemory&) {
    } catch (const CannotWin&) {
    }
    result.accepted_level = accepted_level_;
    return result;
  }

  // The order the last completed run made.
  Schedule schedule() const {
    Schedule schedule;
    schedule.devices = order_;
    return schedule;
  }

 private:
  static std::size_t idx(int i) { return static_cast<std::size_t>(i); }
  int nf(int s) const { return count_[idx(s)][0]; }
  int nb(int s) const { return count_[idx(s)][1]; }
  int nw(int s) const { return count_[idx(s)][2]; }
  Ticks cost(int s, Pass pass) const {
    switch (pass) {
      case Pass::F: return costs_.f[idx(s)];
      case Pass::B: return costs_.b[idx(s)];
      default: return costs_.w[idx(s)];
    }
  }
  Ticks first_start(int s) const { return end_f_[idx(s)][0] - costs_.f[idx(s)]; }
  // The memory judgement (fits_limit), remembering the largest level it accepted.
  bool fits(double value) {
    if (!fits_limit(value, limit_)) return false;
    accepted_level_ = std::max(accepted_level_, value);
    return true;
  }
  // No stage can end its span before what it has done plus the work it still has to do, nor
  // before its last F, that microbatch's round trip through the stages below, its B and its W.
  void give_up_if_it_cannot_win() const {
    if (to_beat_ == kNothingToBeat) return;
    for (int s = 0; s < p_; ++s) {
      const Ticks f = costs_.f[idx(s)];
      const Ticks left = (m_ - nf(s)) * f + (m_ - nb(s)) * costs_.b[idx(s)] + (m_ - nw(s)) * costs_.w[idx(s)];
      Ticks end = clock_[idx(s)] + left;
      if (nb(s) < m_) {
        const Ticks last_f_end = nf(s) < m_ ? clock_[idx(s)] + (m_ - nf(s)) * f : end_f_[idx(s)][idx(m_ - 1)];
        end = std::max(end, last_f_end + round_trip_[idx(s)] + costs_.b[idx(s)] + costs_.w[idx(s)]);
      }
      if (end - first_start(s) >= to_beat_) throw CannotWin{};
    }
  }
  double mem(int s, Pass pass) const {
    switch (pass) {
      case Pass::F: return problem_.mem_f[idx(s)];
      case Pass::B: return problem_.mem_b[idx(s)];
      default: return problem_.mem_w[idx(s)];
    }
  }
  // Arrival (end + transfer) of the input of the next F / the B of microbatch i on stage s.
  Ticks f_input_arrival(int s) const { return end_f_[idx(s - 1)][idx(nf(s))] + costs_.comm_after[idx(s - 1)]; }
  Ticks b_input_arrival(int s, int i) const { return end_b_[idx(s + 1)][idx(i)] + costs_.comm_after[idx(s)]; }

  // Places the next pass of its kind on stage s, list-scheduled after its input.
  void put(int s, Pass pass) {
    const int kind = split_index(pass);
    const int mb = count_[idx(s)][idx(kind)];
    const Ticks no_wait_end = clock_[idx(s)] + cost(s, pass);
    Ticks end = no_wait_end;
    if (pass == Pass::F && s > 0) end = std::max(end, f_input_arrival(s) + cost(s, pass));
    if (pass == Pass::B && s + 1 < p_) end = std::max(end, b_input_arrival(s, mb) + cost(s, pass));
    // Idle before the first action is not a bubble of this device.
    if (nf(s) > 0) {
      idle_[idx(s)] += end - no_wait_end;
      max_idle_ = std::max(max_idle_, idle_[idx(s)]);
    }
    clock_[idx(s)] = end;
    memory_[idx(s)] += mem(s, pass);
    if (pass == Pass::F) end_f_[idx(s)][idx(mb)] = end;
    if (pass == Pass::B) end_b_[idx(s)][idx(mb)] = end;
    ++count_[idx(s)][idx(kind)];
    order_[idx(s)].push_back(Action{pass, mb, 0});
  }

  // Frees memory with W until `delta` fits.
  void make_room(int s, double delta) {
    while (!fits(memory_[idx(s)] + delta)) {
      if (nw(s) >= nb(s)) throw OutOfMemory{};
      put(s, Pass::W);
    }
  }

  // Before a pass whose input arrives at `arrival`: W while a whole W fits in the gap; for a
  // gap smaller than one W, one more W unless the gap is within this stage's idle allowance
  // (the worst stage's idle minus its own) and greedy gap filling is off.
  void fill_gap(int s, Ticks arrival) {
    while (nw(s) < nb(s) && clock_[idx(s)] + costs_.w[idx(s)] <= arrival) put(s, Pass::W);
    if (nw(s) < nb(s) && clock_[idx(s)] < arrival) {
      const bool gap_is_affordable = arrival - clock_[idx(s)] <= max_idle_ - idle_[idx(s)];
      if (!gap_is_affordable || sw_.greedy_gap_fill) put(s, Pass::W);
    }
  }

  void warm_up() {
    for (int s = 0; s < p_; ++s) put(s, Pass::F);
    // From the second-to-last stage down: extra F that fit in memory and end before B0 arrives.
    std::vector<int> extra(idx(p_), 0);
    Ticks b0_end = 0;  // estimated end of B0 on the stage below
    for (int s = p_ - 1; s >= 0; --s) {
      if (s == p_ - 1) {
        b0_end = end_f_[idx(s)][0] + costs_.b[idx(s)];
        continue;
      }
      double memory = memory_[idx(s)];
      Ticks clock = clock_[idx(s)];
      const Ticks b0_arrival = b0_end + costs_.comm_after[idx(s)];
      while (nf(s) + extra[idx(s)] < m_ && fits(memory + problem_.mem_f[idx(s)])) {
        if (sw_.allow_bubble_before_first_b ? clock + costs_.f[idx(s)] > b0_arrival
                                            : clock >= b0_arrival) {
          break;
        }
        memory += problem_.mem_f[idx(s)];
        clock += costs_.f[idx(s)];
        ++extra[idx(s)];
      }
      b0_end = std::max(clock, b0_arrival) + costs_.b[idx(s)];
    }
    // Warm-up counts decrease strictly from stage to stage (unless a stage already has all F).
    for (int s = 1; s < p_; ++s) {
      while (extra[idx(s)] > 0 && extra[idx(s)] >= extra[idx(s - 1)] && nf(s) + extra[idx(s)] < m_) {
        --extra[idx(s)];
      }
      // Never more than the stage above: its forwards are this stage's inputs. (The reference
      // implementation lacks this cap and then emits a B before its F when a stage reaches m.)
      extra[idx(s)] = std::min(extra[idx(s)], extra[idx(s - 1)]);
    }
    for (int s = 0; s < p_; ++s) {
      for (int k = 0; k < extra[idx(s)]; ++k) put(s, Pass::F);
    }
    for (int s = p_ - 1; s >= 0; --s) {
      make_room(s, problem_.mem_b[idx(s)]);
      put(s, Pass::B);
    }
  }

  // Whether stage s takes an F this round (before the downstream cap).
  bool wants_forward(int s) {
    if (nf(s) >= m_) return false;
    if (!sw_.prioritize_b || s + 1 >= p_ || nf(s) < nf(s + 1) + 2) return true;
    // Far ahead: the F is worth it only if it (with the W it needs for memory) ends before the
    // next stage can hand back a gradient, or skipping would idle this stage beyond the worst.
    const Ticks next_f_and_b =
        clock_[idx(s + 1)] + costs_.f[idx(s + 1)] + costs_.b[idx(s + 1)] + costs_.comm_after[idx(s)];
    if (clock_[idx(s)] >= next_f_and_b) return false;
    Ticks w_cost = 0;
    double memory = memory_[idx(s)] + problem_.mem_f[idx(s)];
    for (int k = nw(s); !fits(memory) && k < nb(s); ++k) {
      w_cost += costs_.w[idx(s)];
      memory += problem_.mem_w[idx(s)];
    }
    if (clock_[idx(s)] + costs_.f[idx(s)] + w_cost <= next_f_and_b) return true;
    return next_f_and_b - clock_[idx(s)] > max_idle_ - idle_[idx(s)];
  }

  void steady_round(int i) {
    std::vector<char> take(idx(p_), 0);
    for (int s = 0; s < p_; ++s) take[idx(s)] = wants_forward(s) ? 1 : 0;
    // A stage only takes an F when every stage below it does, so F inputs are always placed.
    for (int s = p_ - 2; s >= 0; --s) take[idx(s)] = std::min(take[idx(s)], take[idx(s + 1)]);
    for (int s = 0; s < p_; ++s) {
      if (!take[idx(s)]) continue;
      if (s > 0 && nf(s - 1) <= nf(s)) throw Error("zb-auto: internal error: F input not placed");
      make_room(s, problem_.mem_f[idx(s)]);
      if (s > 0) fill_gap(s, f_input_arrival(s));
      put(s, Pass::F);
    }
    for (int s = p_ - 1; s >= 0; --s) {
      if (nb(s) != i || nf(s) <= i) throw Error(fmt::format("zb-auto: internal error: B order broken s={} i={} nb={} nf={}", s, i, nb(s), nf(s)));
      make_room(s, problem_.mem_b[idx(s)]);
      if (s + 1 < p_) fill_gap(s, b_input_arrival(s, i));
      // The first stage has nothing left to wait for once its forwards are done.
      if (s == 0 && nf(s) == m_) {
        while (nw(s) < nb(s)) put(s, Pass::W);
      }
      put(s, Pass::B);
    }
  }

  const Problem& problem_;
  const StageTicks& costs_;
  double limit_ = 0;
  GreedySwitches sw_;
  Ticks to_beat_ = kNothingToBeat;
  int p_;
  int m_;
  std::vector<Ticks> clock_, idle_, round_trip_;
  std::vector<double> memory_;
  Ticks max_idle_ = 0;
  double accepted_level_ = 0;
  std::vector<std::array<int, 3>> count_;
  std::vector<std::vector<Ticks>> end_f_, end_b_;
  std::vector<std::vector<Action>> order_;
};

void require_linear(const Problem& problem) {
  if (problem.chunks != 1) {
    throw InputError(fmt::format("zb-auto: needs one stage per device (chunks = 1), got chunks = {}",
                                 problem.chunks));
  }
}

// The least memory any schedule needs: one forward in flight per stage.
double one_forward_per_stage(const Problem& problem) {
  return *std::max_element(problem.mem_f.begin(), problem.mem_f.end());
}

}  // namespace

double greedy_memory_limit(const Problem& problem, std::optional<double> limit) {
  if (!limit) limit = problem.memory_limit();
  const double needed = one_forward_per_stage(problem);
  if (!limit) return needed * problem.microbatches;  // every forward fits
  if (!std::isfinite(*limit) || *limit + 1e-9 < needed) {
    throw ScheduleError(fmt::format(
        "memory limit {} is below what any schedule needs: one forward in flight per stage needs {} "
        "(mem_f); raise --mem-limit to at least {}",
        *limit, needed, needed));
  }
  return *limit;
}

std::optional<GreedyResult> greedy_variant(const Problem& problem, double memory_limit,
                                           const GreedySwitches& switches) {
  require_linear(problem);
  const StageTicks costs = stage_ticks(problem, TimeGrid(problem));
  GreedyRun runner(problem, costs);
  if (!runner.run(memory_limit, switches, kNothingToBeat).done) return std::nullopt;
  GreedyResult result;
  result.schedule = runner.schedule();
  result.span = list_timing(problem, result.schedule).span;
  result.memory_limit = memory_limit;
  result.planned_limit = memory_limit;
  result.switches = switches;
  return result;
}

GreedyResult greedy_schedule(const Problem& problem, std::optional<double> memory_limit) {
  require_linear(problem);
  const double limit = greedy_memory_limit(problem, memory_limit);
  const TimeGrid grid(problem);
  const StageTicks costs = stage_ticks(problem, grid);
  const auto variants = greedy_variants();

  // Candidates in the order ties are broken; the first strictly shortest (on the grid) wins.
  struct Best {
    Schedule schedule;
    Ticks span = 0;
    int variant = 0;
    double planned_limit = 0;
  };
  std::optional<Best> best;
  auto to_beat = [&] { return best ? best->span : kNothingToBeat; };
  GreedyRun runner(problem, costs);
  auto try_variant = [&](std::size_t k, double at) {
    const VariantRun run = runner.run(at, variants[k], to_beat());
    if (run.done && (!best || run.span < best->span)) best = Best{runner.schedule(), run.span, static_cast<int>(k), at};
    return run.accepted_level;
  };

  // 1. The 8 variants at the limit.
  std::array<double, 8> accepted{};
  for (std::size_t k = 0; k < variants.size(); ++k) accepted[k] = try_variant(k, limit);

  // 2. The handcrafted ZB-H1 and ZB-H2 when they fit the limit, so zb-auto is never worse than a
  // handcrafted schedule of the same memory (with unequal per-stage costs the greedy rounds can
  // lose to them). Taken only when strictly better: equal-cost cases keep the heuristic's own
  // order, as the reference implementation produces it.
  const Schedule handcrafted[] = {make_zb_h1(problem), make_zb_h2(problem)};
  for (std::size_t k = 0; k < 2; ++k) {
    if (first_over_limit(peak_memory_by_order(problem, handcrafted[k]), limit)) continue;
    const Ticks span = list_span_ticks(problem, costs, handcrafted[k]);
    if (!best || span < best->span) best = Best{handcrafted[k], span, static_cast<int>(variants.size() + k), limit};
  }

  // 3. The fallback: 1F1B's order with each B followed at once by its W (split_1f1b.h). It fits
  // every limit some order of split passes fits, also where the greedy rounds run out of memory
  // (recomputation: B allocates what W frees); taken only when strictly better, like ZB-H1/H2.
  const int fallback_variant = static_cast<int>(variants.size()) + 2;
  auto try_fallback = [&](double at) -> std::optional<double> {
    const std::optional<Split1f1b> fallback = split_1f1b(problem, at);
    if (!fallback) return std::nullopt;
    if (!first_over_limit(peak_memory_by_order(problem, fallback->schedule), limit)) {
      const Ticks span = list_span_ticks(problem, costs, fallback->schedule);
      if (!best || span < best->span) best = Best{fallback->schedule, span, fallback_variant, at};
    }
    return fallback->accepted_level;
  };
  const std::optional<double> fallback_level = try_fallback(limit);

  // 4. Monotone in the limit: whatever the heuristic makes at a smaller limit also fits this one,
  // so each variant is also run at every smaller limit where it behaves differently. A run is the
  // same at every limit down to the largest memory level it accepted, so the next limit is just
  // below that level; the descent stops where no schedule can be shorter than the best (the
  // lower bound at that limit holds for every smaller one) or the limit is below one forward.
  const double needed = one_forward_per_stage(problem);
  const Problem problem_on_grid = on_grid(problem, grid);
  std::map<double, double> bound_at;  // lower bounds on the grid, by limit (variants revisit levels)
  auto cannot_be_shorter = [&](double at) {
    if (!best) return false;
    auto [it, fresh] = bound_at.try_emplace(at, 0.0);
    if (fresh) it->second = span_lower_bound(problem_on_grid, at).span;
    // Spans are whole ticks: a shorter one is at most best - 1, whose bound is at most that.
    return it->second > static_cast<double>(best->span) - 0.5;
  };
  // The largest limit below `level` that `level` does not fit, if it is still worth trying.
  auto next_below = [&](double level) -> std::optional<double> {
    // A run that accepted no level (out of memory at its first test) is the same at every smaller
    // limit; stepping below 0 would never end.
    if (level <= 0 || level + 1e-9 < needed) return std::nullopt;
    double below = level / (1 + 1e-9);
    while (fits_limit(level, below)) below = std::nextafter(below, 0.0);
    if (below + 1e-9 < needed || cannot_be_shorter(below)) return std::nullopt;
    return below;
  };
  for (std::size_t k = 0; k < variants.size(); ++k) {
    for (double level = accepted[k];;) {
      const std::optional<double> below = next_below(level);
      if (!below) break;
      level = try_variant(k, *below);
    }
  }
  // The fallback likewise: each smaller limit at which some device keeps one forward fewer.
  for (std::optional<double> level = fallback_level; level;) {
    const std::optional<double> below = next_below(*level);
    if (!below) break;
    level = try_fallback(*below);
  }

  if (!best) {
    // Only the fallback's smallest order is left to fail: one forward and its B on some stage.
    std::size_t worst = 0;
    double held = 0;
    for (std::size_t s = 0; s < problem.mem_f.size(); ++s) {
      const double one = problem.mem_f[s] + std::max(0.0, problem.mem_b[s]);
      if (one > held) worst = s, held = one;
    }
    throw ScheduleError(fmt::format(
        "memory limit {} is too small for zb-auto: stage {} holds {} (mem_f + mem_b) between a B and its W, "
        "so no order of split passes fits; raise --mem-limit to at least {}",
        limit, worst, held, held));
  }
  GreedyResult result;
  result.schedule = std::move(best->schedule);
  result.schedule.name = "zb-auto";
  result.span = list_timing(problem, result.schedule).span;
  result.memory_limit = limit;
  result.planned_limit = best->planned_limit;
  result.variant = best->variant;
  if (best->variant < static_cast<int>(variants.size())) result.switches = variants[static_cast<std::size_t>(best->variant)];
  return result;
}

}  // namespace zb
