// Building-block V schedules (see v_controllable.h): the fixed blocks, the steady phase repeated,
// and v-auto's search over the blocks. Each block's schedule is made on its slot grid
// (detail/v_grid.h); its peak before the squeeze comes from detail/v_block_peaks.h.
#include "sim/solver/detail/v_controllable.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/memory.h"
#include "sim/core/validator.h"
#include "sim/solver/detail/v_block_peaks.h"
#include "sim/solver/detail/v_grid.h"
#include "sim/solver/detail/time_grid.h"

namespace zb {

namespace {

using detail::BlockPeaks;

// The block's schedule on the slot grid (detail/v_grid.h); v-auto's builds (`rebuild`) rebuild the ends.
Schedule build(const Problem& problem, const VBlock& block, std::string name, bool rebuild = false) {
  return detail::squeezed_block_schedule(problem, block, std::move(name), rebuild);
}

// The action with its microbatch `by` later.
Action later(Action action, int by) {
  action.microbatch += by;
  return action;
}

// A device's actions with the six before `split` put in again there `more` times, each copy one
// microbatch later than the one before, and the actions from `split` on `more` microbatches later.
std::vector<Action> with_period_repeated(const std::vector<Action>& actions, std::size_t split, int more) {
  const std::size_t period = kVBlockPeriod;
  std::vector<Action> out(actions.begin(), actions.begin() + static_cast<std::ptrdiff_t>(split));
  out.reserve(actions.size() + period * static_cast<std::size_t>(more));
  for (int q = 1; q <= more; ++q) {
    for (std::size_t i = split - period; i < split; ++i) out.push_back(later(actions[i], q));
  }
  for (std::size_t i = split; i < actions.size(); ++i) out.push_back(later(actions[i], more));
  return out;
}

// The first slot after `after` that falls on position `position` of the period.
int next_slot_at(int after, int position) {
  const int first = after + 1;
  return first + ((position - first) % kVBlockPeriod + kVBlockPeriod) % kVBlockPeriod;
}

// The blocks v-auto searches (the paper's appendix A): device 0's chunk-0 F at position 0 and its
// other three passes anywhere else in the period; each next device shifts chunk-0 F and chunk-1 B
// by delta (1..5) and chunk-1 F and chunk-0 B by -1, with one delta for the first `split` devices
// and a smaller or equal one after; the four passes of every device at distinct positions. Each
// pass's microbatch 0 runs at the first slot of its position after the pass it waits for.
// `visit(rows)` sees each distinct block once, in enumeration order, in a buffer reused for the
// next one.
// With E_d the sum of delta + 1 over devices 1..d, device d's positions are those of device 0
// moved by E_d - d, -d, E_d - d and -d, so two of them meet exactly when E_d is one of four
// residues mod 6 (chunk-0 F on chunk-1 F or chunk-0 B, chunk-1 B on chunk-1 F or chunk-0 B; the
// other two pairs never meet): a split is checked in constant time from where the first delta
// first meets one and how far the later delta goes from E_split. The slots follow without a
// search too: a pass `delta` positions ahead of the one it waits for runs `delta` slots after it,
// one position back (the way back up the V) one slot before it on the device above, and only the
// three turns need next_slot_at. Two parameter sets give one block only when the split is p - 1
// (every device gets the first delta, as with one delta throughout): that block is seen at its
// first parameters, the later delta 1, and the others are skipped.
template <typename Visit>
void for_each_searched_block(int p, Visit&& visit) {
  auto mod6 = [](int x) { return (x % kVBlockPeriod + kVBlockPeriod) % kVBlockPeriod; };
  VBlock rows(static_cast<std::size_t>(p));
  std::vector<int> delta_of(static_cast<std::size_t>(p), 0);
  for (int f1 = 1; f1 < kVBlockPeriod; ++f1) {
    for (int b1 = 1; b1 < kVBlockPeriod; ++b1) {
      for (int b0 = 1; b0 < kVBlockPeriod; ++b0) {
        if (f1 == b1 || f1 == b0 || b1 == b0) continue;
        unsigned meets = 0;  // the residues of E_d mod 6 at which two passes share a position
        for (int residue : {f1, b0, f1 - b1, b0 - b1}) meets |= 1u << mod6(residue);
        // How many devices in a row, stepping E by `step` from residue r, stay clear (6 or more:
        // all of them, as the residues repeat within 6 steps).
        auto clear_run = [&](int r, int step) {
          int run = 0;
          while (run < kVBlockPeriod && ((meets >> mod6(r + (run + 1) * step)) & 1u) == 0) ++run;
          return run == kVBlockPeriod ? p : run;
        };
        for (int first_delta = 1; first_delta < kVBlockPeriod; ++first_delta) {
          const int first_clear = clear_run(0, first_delta + 1);  // devices 1..first_clear are clear
          for (int later_delta = 1; later_delta <= first_delta; ++later_delta) {
            if (p == 1 && first_delta > 1) continue;  // one device: the deltas shape nothing
            const bool one_delta = later_delta == first_delta;
            if (one_delta && first_delta > 1 && p > 1) continue;  // seen at split p - 1, later delta 1
            const int splits = one_delta ? 1 : later_delta == 1 ? p - 1 : p - 2;
            for (int split = 1; split <= splits; ++split) {
              if (one_delta ? first_clear < p - 1
                            : first_clear < split ||
                                  clear_run(mod6(split * (first_delta + 1)), later_delta + 1) < p - 1 - split) {
                continue;
              }
              for (int d = 1; d < p; ++d) delta_of[d] = d <= split ? first_delta : later_delta;
              rows[0][0] = 0;
              for (int d = 1; d < p; ++d) rows[d][0] = rows[d - 1][0] + delta_of[d];
              rows[p - 1][1] = next_slot_at(rows[p - 1][0], mod6(f1 - (p - 1)));
              for (int d = p - 2; d >= 0; --d) rows[d][1] = rows[d + 1][1] + 1;
              rows[0][2] = next_slot_at(rows[0][1], b1);
              for (int d = 1; d < p; ++d) rows[d][2] = rows[d - 1][2] + delta_of[d];
              rows[p - 1][3] = next_slot_at(rows[p - 1][2], mod6(b0 - (p - 1)));
              for (int d = p - 2; d >= 0; --d) rows[d][3] = rows[d + 1][3] + 1;
              visit(std::as_const(rows));
            }
          }
        }
      }
    }
  }
}

}  // namespace

VBlock v_min_block(int p) {
  // Offsets between the passes chosen so that (p+4)/3 microbatches are in flight; p % 3 == 0
  // needs a gap of 2 before the backward to keep the 6 passes on distinct slots mod 6.
  const int gap = p % 3 == 0 ? 2 : 0;
  VBlock block(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) block[i] = {i, 2 * p - i - 1, 2 * p + gap + i, 4 * p + gap - i - 1};
  return block;
}

VBlock v_half_block(int p) {
  const int gap = p % 2 == 0 ? 3 : 0;
  VBlock block(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) block[i] = {2 * i, 3 * p - i - 2, 3 * p + gap + 2 * i - 1, 6 * p + gap - i - 2};
  return block;
}

Schedule schedule_from_block(const Problem& problem, const VBlock& block) {
  return build(problem, block, "v-block", true);
}

std::optional<Schedule> extend_steady_phase(const Schedule& at_n, const Schedule& at_n1, int more) {
  Schedule out = at_n1;
  for (std::size_t d = 0; d < at_n.devices.size(); ++d) {
    const std::vector<Action>& shorter = at_n.devices[d];
    const std::vector<Action>& longer = at_n1.devices[d];
    const std::size_t period = kVBlockPeriod;
    if (longer.size() != shorter.size() + period) return std::nullopt;
    std::size_t split = 0;  // where the period went in: the first action that differs
    while (split < shorter.size() && shorter[split] == longer[split]) ++split;
    if (split < period) return std::nullopt;
    for (std::size_t i = split; i < shorter.size(); ++i) {
      if (longer[i + period] != later(shorter[i], 1)) return std::nullopt;
    }
    for (std::size_t i = split; i < split + period; ++i) {
      if (longer[i] != later(longer[i - period], 1)) return std::nullopt;
    }
    out.devices[d] = with_period_repeated(shorter, split, more);  // the period checked is the one put in
  }
  return out;
}

Schedule make_v_min(const Problem& problem) {
  require_vshape(problem, "v-min");
  return build(problem, v_min_block(problem.devices), "v-min");
}

Schedule make_v_half(const Problem& problem) {
  require_vshape(problem, "v-half");
  return build(problem, v_half_block(problem.devices), "v-half");
}

namespace {

// A level of v_auto_levels with the peak its blocks share.
struct PeakLevel {
  double peak = 0;
  std::vector<VBlock> blocks;
};

std::vector<PeakLevel> peak_levels(const Problem& problem) {
  require_vshape(problem, "v-auto");
  const double limit = problem.memory_limit().value_or(problem.devices * problem.activation_unit());
  // Blocks by the peak of their unsqueezed grid. The squeeze never raises the largest peak, so that
  // peak decides what fits.
  std::map<double, std::vector<VBlock>> by_peak;  // in enumeration order within a peak
  BlockPeaks peaks(problem);
  // Blocks over `cap` are never searched (below), so their rows are not all walked; when no block
  // is within the cap, or the smallest peak is above it within the limit's tolerance (then the
  // searched limit is that peak, not the cap), every block's peak is needed after all.
  const double cap = std::min(limit, problem.devices * problem.activation_unit());
  for_each_searched_block(problem.devices, [&](const VBlock& block) {
    if (const std::optional<double> peak = peaks.largest_peak(block, cap)) by_peak[*peak].push_back(block);
  });
  if (by_peak.empty() || by_peak.begin()->first > cap) {
    by_peak.clear();
    for_each_searched_block(problem.devices,
                            [&](const VBlock& block) { by_peak[*peaks.largest_peak(block)].push_back(block); });
  }
  auto fits = [&](double peak) { return !first_over_limit({peak}, limit); };
  if (!fits(by_peak.begin()->first)) {
    const std::string given = problem.mem_limit && problem.mem_limit->times_p
                                  ? fmt::format("{} = {:g}", problem.mem_limit->to_string(), limit)
                                  : fmt::format("{:g}", limit);
    throw InputError(fmt::format("v-auto: memory limit {} is below {:g}, the smallest peak of a V building block "
                                 "for this problem",
                                 given, by_peak.begin()->first));
  }
  // Blocks above ZB-V's memory (p M_B, 2p chunk activations) are not searched, as the reference's
  // v-auto does not: at unit costs ZB-V's memory already reaches zero bubble, and the larger blocks
  // ranked lower, so a limit above it gave a longer schedule than ZB-V's memory (p=4 m=9: +5.7% at
  // 12 chunk activations against 11). So every limit from p M_B up gives the same schedule. When
  // even the smallest peak is above p M_B (a B that allocates, as the cost model's and the
  // executor's do) the blocks of that smallest peak are searched: they fit the limit (checked above).
  const double searched_limit =
      std::max(std::min(limit, problem.devices * problem.activation_unit()), by_peak.begin()->first);
  std::vector<PeakLevel> levels;
  for (auto level = by_peak.rbegin(); level != by_peak.rend(); ++level) {
    if (first_over_limit({level->first}, searched_limit)) continue;
    levels.push_back({level->first, std::move(level->second)});
  }
  return levels;
}

// The problem at the microbatches v-auto ranks blocks at (see make_v_auto).
Problem at_ranking_m(const Problem& problem) {
  Problem ranking = problem;
  ranking.microbatches = std::min(problem.microbatches, 2 * problem.devices + 1);
  return ranking;
}

// The block's schedule at the problem's m from its build at the ranking's m (`at_ranking`): that
// build extended when the steady phase repeats (extend_steady_phase), else the block built at m.
// The build at n with the period that ends its longest run of repeating actions (each the one six
// before it, one microbatch later) put in `more` more times on every device, or nullopt when a
// device has no repeating action. Unchecked: where the build at n + 1 puts its period elsewhere this is another
// schedule than the build at n + `more` (build_at_m takes it only when nothing can be shorter).
std::optional<Schedule> repeat_longest_run(const Schedule& at_n, int more) {
  Schedule out = at_n;
  const std::size_t period = kVBlockPeriod;
  for (std::size_t d = 0; d < at_n.devices.size(); ++d) {
    const std::vector<Action>& x = at_n.devices[d];
    std::size_t best_from = 0, best_to = 0, from = 0;
    bool in_run = false;
    for (std::size_t j = period; j <= x.size(); ++j) {
      const bool repeats = j < x.size() && x[j] == later(x[j - period], 1);
      if (repeats && !in_run) from = j;
      if (!repeats && in_run && j - from >= best_to - best_from) {
        best_from = from;
        best_to = j;
      }
      in_run = repeats;
    }
    if (best_to == 0) return std::nullopt;
    out.devices[d] = with_period_repeated(x, best_to, more);
  }
  return out;
}

// The largest device peak of the schedule, as the validator counts it.
double largest_peak(const Problem& problem, const Schedule& schedule) {
  const std::vector<double> peaks = peak_memory_by_order(problem, schedule);
  return peaks.empty() ? 0.0 : *std::max_element(peaks.begin(), peaks.end());
}

Schedule build_at_m(const Problem& problem, const VBlock& block, const Schedule& at_ranking) {
  const Problem ranking = at_ranking_m(problem);
  const int n = ranking.microbatches;
  if (problem.microbatches == n) return at_ranking;
  if (problem.microbatches > n + 1) {
    // First without the check build: the ranking build's longest repeating run put in, taken when
    // its span is the busiest device's work (no schedule is shorter, so the check could only find
    // another schedule as short) and it holds no more memory than the ranking build.
    if (std::optional<Schedule> repeated = repeat_longest_run(at_ranking, problem.microbatches - n)) {
      const TimeGrid grid(problem);
      double busiest = 0;
      for (int d = 0; d < problem.devices; ++d) busiest = std::max(busiest, problem.device_work(d));
      const EvalOptions span_only{.record_spans = false, .record_transfers = false, .record_memory = false};
      if (grid.ticks(evaluate(problem, *repeated, span_only).metrics.span) <= grid.ticks(busiest) &&
          largest_peak(problem, *repeated) <= largest_peak(ranking, at_ranking) * (1 + 1e-12)) {
        return std::move(*repeated);
      }
    }
    Problem one_more = problem;
    one_more.microbatches = n + 1;
    std::optional<Schedule> extended =
        extend_steady_phase(at_ranking, build(one_more, block, at_ranking.name, true), problem.microbatches - n);
    if (extended) return std::move(*extended);
  }
  return build(problem, block, at_ranking.name, true);
}

// No schedule in which device 0 never holds more than `peak` has a span (on the grid) below this:
// device 0's first backward (chunk 1's: the V's last stage is on device 0) waits for its
// microbatch's forward through all 2p stages from device 0's first pass on, and until then device 0
// can run only forwards, no more than fit in `peak` (nothing is freed before a B), so it idles for
// the rest of that chain on top of its work. Transfers are left out (a weaker bound, but a sure
// one), and one tick per summed cost is taken off for the rounding of sums on the grid. Every block
// of a level builds schedules within the level's peak (the squeeze and the rebuilt ends never raise
// the largest peak), so this bounds them all.
Ticks head_bound(const Problem& problem, const TimeGrid& grid, double peak) {
  const Ticks work = grid.ticks(problem.device_work(0));
  const Ticks rounding = 6 * static_cast<Ticks>(problem.microbatches) + problem.stages();
  const double smallest_f = std::min(memory_delta(problem, Pass::F, problem.stage_of(0, 0)).net(),
                                     memory_delta(problem, Pass::F, problem.stage_of(0, 1)).net());
  if (smallest_f <= 0) return work - rounding;
  const double fit = std::floor(peak / smallest_f + 1e-9);
  const Ticks forwards = static_cast<Ticks>(std::min(fit, 2.0 * problem.microbatches));
  Ticks chain = 0;
  for (int stage = 0; stage < problem.stages(); ++stage) chain += grid.ticks(problem.t_f[stage]);
  const Ticks longest_f =
      std::max(grid.ticks(problem.t_f[problem.stage_of(0, 0)]), grid.ticks(problem.t_f[problem.stage_of(0, 1)]));
  return work + std::max<Ticks>(0, chain - forwards * longest_f) - rounding;
}

}  // namespace

Schedule v_auto_block_schedule(const Problem& problem, const VBlock& block) {
  return build_at_m(problem, block, build(at_ranking_m(problem), block, "v-block", true));
}

std::vector<std::vector<VBlock>> v_auto_levels(const Problem& problem) {
  std::vector<std::vector<VBlock>> levels;
  for (PeakLevel& level : peak_levels(problem)) levels.push_back(std::move(level.blocks));
  return levels;
}

std::vector<VBlock> v_auto_candidates(const Problem& problem) {
  const std::vector<std::vector<VBlock>> levels = v_auto_levels(problem);
  // More memory buys a smaller bubble, so the two largest peaks that fit are ranked.
  std::vector<VBlock> candidates;
  for (std::size_t i = std::min<std::size_t>(2, levels.size()); i-- > 0;) {
    candidates.insert(candidates.end(), levels[i].begin(), levels[i].end());
  }
  return candidates;
}

// A level's blocks (about 48p of them at the top level) are each built at m = 2p + 1 to be
// ranked, so ranking them all is O(p^3) (p=64 m=32: 10 s, p=256 m=128: over 300 s). They are all
// ranked while that builds at most kExhaustiveRankingActions actions (up to about p = 24: exact,
// as the tests check); beyond, a level's ranking stops once kRankingPatience blocks in a row
// build no shorter span than the best so far. A heuristic: on 120 random problems (p <= 20, m up
// to 4p, five limits, random costs) a patience of 32 picked what ranking every block picks in all
// of them, 16 missed in 12; but p=6 m=4 at a limit of 10 M_B (a test's case) needs more than 64.
constexpr double kExhaustiveRankingActions = 2e7;
constexpr int kRankingPatience = 64;

Schedule make_v_auto(const Problem& problem) {
  const std::vector<PeakLevel> levels = peak_levels(problem);
  // The bubble lies in the warm-up and cool-down, which 2p + 1 microbatches already show: rank
  // there. Not at 2p: there the warm-up and the rebuilt cool-down meet and some blocks score a slot
  // better than at any larger m (p=5, limit 10 chunk activations: the first block reaching zero
  // bubble at 2p is 1 slot above at every m from 2p + 1 to 6p; ranked at 2p + 1, the winner matches
  // the best block at 2p + 2, 3p and 4p for every p = 4..8 and limit). Equal spans go to the
  // smaller peak. This is a heuristic, not exact: at p=8 m=64 (unit costs,
  // no limit) the span at m minus the span at 2p is 288 for most candidates but 287 or 286 for a
  // few (their squeeze does better with a longer steady phase), so the order at 2p can differ from
  // the order at m; there the winner still reaches zero bubble at m.
  // Spans are compared on the solvers' time grid (time_grid.h), so the time unit decides nothing.
  // No span is below the busiest device's work, nor below the level's head_bound: once the best
  // reaches that floor, no later candidate can win (p=32 m=256 at unit costs: 2 candidates are
  // built at the ranking's m, the level below 2p chunk activations not at all).
  const Problem ranking = at_ranking_m(problem);
  const TimeGrid grid(problem);
  auto busiest_work = [&](const Problem& at) {
    double busiest = 0;
    for (int d = 0; d < at.devices; ++d) busiest = std::max(busiest, at.device_work(d));
    return grid.ticks(busiest);
  };
  const Ticks ranking_bound = busiest_work(ranking);
  const EvalOptions span_only{.record_spans = false, .record_transfers = false, .record_memory = false};
  // Each level's first strictly shortest block at the ranking's m, ranked once.
  struct LevelBest {
    const VBlock* block = nullptr;
    Ticks span = 0;
    Schedule built;  // at the ranking's m
  };
  std::vector<std::optional<LevelBest>> ranked(levels.size());
  // No block of level i is shorter at the ranking's m than this: the busiest device's work, or
  // device 0's idle before its first backward within the level's peak (head_bound).
  auto level_floor = [&](std::size_t i) { return std::max(ranking_bound, head_bound(ranking, grid, levels[i].peak)); };
  auto level_best = [&](std::size_t i) -> const LevelBest& {
    if (!ranked[i]) {
      const Ticks floor = level_floor(i);
      LevelBest best;
      int without_gain = 0;
      const double actions = 6.0 * ranking.devices * ranking.microbatches;  // F, B, W of 2 chunks
      const bool exhaustive = actions * static_cast<double>(levels[i].blocks.size()) <= kExhaustiveRankingActions;
      for (const VBlock& block : levels[i].blocks) {
        Schedule built = build(ranking, block, "v-auto", true);
        const Ticks span = grid.ticks(evaluate(ranking, built, span_only).metrics.span);
        if (!best.block || span < best.span) {
          best = {&block, span, std::move(built)};
          without_gain = 0;
        } else if (++without_gain >= kRankingPatience && !exhaustive) {
          break;
        }
        if (best.span <= floor) break;
      }
      ranked[i] = std::move(best);
    }
    return *ranked[i];
  };
  // What v-auto picks when the largest peak that fits is level `top`'s: the better of that level
  // and the one below, the lower one on a tie (the smaller peak). When the upper level is already
  // shorter than anything the lower one can reach, the lower one is not ranked (at p=32 m=256 unit
  // costs: the level just below 2p chunk activations idles a chunk F on device 0 at least).
  auto pick = [&](std::size_t top) -> const LevelBest& {
    if (top + 1 == levels.size()) return level_best(top);
    const Ticks lower_floor = level_floor(top + 1);
    if (lower_floor > ranking_bound) {
      const LevelBest& upper = level_best(top);
      if (upper.span < lower_floor) return upper;
    }
    const LevelBest& lower = level_best(top + 1);
    if (lower.span <= ranking_bound) return lower;  // the upper level cannot be strictly shorter
    const LevelBest& upper = level_best(top);
    return lower.span <= upper.span ? lower : upper;
  };
  Schedule best = build_at_m(problem, *pick(0).block, pick(0).built);
  Ticks best_span = grid.ticks(evaluate(problem, best, span_only).metrics.span);
  // Toward monotone in the limit: what v-auto makes under a smaller limit fits this one too, so it
  // is made at the smaller levels (where it ranks other blocks) and taken when strictly shorter at
  // m. Ranking every level would make this exact but costs every block (p=32 m=256 at the 6.2B
  // costs: 7 s instead of 0.3 s), so the descent goes on only while the level just ranked beats, at
  // the ranking's m, every level above it (less memory ranks worse in the normal case), and stops
  // where nothing can be shorter (the busiest device's work at m).
  const Ticks bound = busiest_work(problem);
  auto ranked_above = [&](std::size_t below) {
    std::optional<Ticks> shortest;
    for (std::size_t i = 0; i < below; ++i) {
      if (ranked[i] && (!shortest || ranked[i]->span < *shortest)) shortest = ranked[i]->span;
    }
    return shortest;
  };
  for (std::size_t top = 1; top < levels.size() && best_span > bound; ++top) {
    const LevelBest& picked = pick(top);
    Schedule lower = build_at_m(problem, *picked.block, picked.built);
    const Ticks span = grid.ticks(evaluate(problem, lower, span_only).metrics.span);
    if (span < best_span) {
      best = std::move(lower);
      best_span = span;
    }
    const std::optional<Ticks> above = ranked_above(top + 1);
    // An unranked level below was beaten by the one above it without being built.
    if (top + 1 < levels.size() && above && (!ranked[top + 1] || ranked[top + 1]->span >= *above)) break;
  }
  return best;
}

}  // namespace zb
