// zb-auto's quality over random problems: does the memory frontier ever rise, and does the time
// unit change the schedule? Then the same for the two-chunk generators (zb-v, v-auto, and zb-auto on
// the V and the interleaved placement) at every limit from V-Min's memory to 3p chunk activations
// (1.5 times ZB-V's). Prints two tables; rerun with
// `./build/bench/zb_bench_frontier_monotonicity [problems] [seed] [v_problems]` (defaults 1000, 17
// and 100). Deterministic for a given seed.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/problem_spec.h"
#include "sim/core/schedule.h"
#include "sim/solver/auto_schedule.h"
#include "sim/solver/frontier.h"
#include "sim/solver/detail/v_controllable.h"
#include "sim/solver/detail/zb_v_greedy.h"

namespace {

// Per-stage costs around the paper's 1.5B ones (18.522 / 18.086 / 9.337 ms, t_comm 0.601 ms),
// each scaled by 0.7..1.3 and rounded to whole microseconds, so the same numbers can be written
// exactly in ms and in us. Memory in the reference implementation's units (2 / -1 / -1).
struct RandomCell {
  int p = 0;
  int m = 0;
  std::vector<long> f_us, b_us, w_us;
  long comm_us = 0;
};

RandomCell random_cell(std::mt19937& rng) {
  static constexpr int kDevices[] = {4, 8, 16};
  RandomCell cell;
  cell.p = kDevices[rng() % 3];
  cell.m = cell.p + static_cast<int>(rng() % static_cast<unsigned>(3 * cell.p + 1));
  std::uniform_real_distribution<double> jitter(0.7, 1.3);
  for (int s = 0; s < cell.p; ++s) {
    cell.f_us.push_back(std::lround(18522 * jitter(rng)));
    cell.b_us.push_back(std::lround(18086 * jitter(rng)));
    cell.w_us.push_back(std::lround(9337 * jitter(rng)));
  }
  cell.comm_us = std::lround(601 * jitter(rng));
  return cell;
}

// A cost in microseconds, or in milliseconds (the decimal text divided by 1000, parsed as a
// user's input would be).
double in_unit(long us, bool in_ms) { return in_ms ? std::stod(fmt::format("{}.{:03d}", us / 1000, us % 1000)) : double(us); }

std::vector<double> in_unit(const std::vector<long>& values, bool in_ms) {
  std::vector<double> out;
  for (long v : values) out.push_back(in_unit(v, in_ms));
  return out;
}

// The cell in microseconds or in milliseconds.
zb::Problem build(const RandomCell& cell, bool in_ms) {
  auto list = [in_ms](const std::vector<long>& values) { return in_unit(values, in_ms); };
  auto convert = [in_ms](long us) { return in_unit(us, in_ms); };
  zb::ProblemSpec spec;
  spec.devices = cell.p;
  spec.microbatches = cell.m;
  spec.t_f = list(cell.f_us);
  spec.t_b = list(cell.b_us);
  spec.t_w = list(cell.w_us);
  spec.t_comm = {convert(cell.comm_us)};
  spec.mem_f = {2};
  spec.mem_b = {-1};
  spec.mem_w = {-1};
  spec.time_unit = in_ms ? zb::TimeUnit::ms : zb::TimeUnit::us;
  return spec.build("random cell");
}

// A V problem: 2p stages with per-chunk costs, half the paper's 1.5B per-device ones, each jittered
// by +-30% and rounded to whole microseconds; memory one unit per chunk activation (F +1, W -1,
// as the controllable-memory paper counts it), so limits are whole chunk activations.
RandomCell random_v_cell(std::mt19937& rng) {
  static constexpr int kDevices[] = {4, 6, 8};
  RandomCell cell;
  cell.p = kDevices[rng() % 3];
  cell.m = cell.p + static_cast<int>(rng() % static_cast<unsigned>(2 * cell.p + 1));
  std::uniform_real_distribution<double> jitter(0.7, 1.3);
  for (int s = 0; s < 2 * cell.p; ++s) {
    cell.f_us.push_back(std::lround(9261 * jitter(rng)));
    cell.b_us.push_back(std::lround(9043 * jitter(rng)));
    cell.w_us.push_back(std::lround(4669 * jitter(rng)));
  }
  cell.comm_us = std::lround(601 * jitter(rng));
  return cell;
}

zb::Problem build_v(const RandomCell& cell, bool in_ms, int limit, zb::Placement placement = zb::Placement::vshape) {
  zb::ProblemSpec spec;
  spec.devices = cell.p;
  spec.microbatches = cell.m;
  spec.chunks = 2;
  spec.placement = placement;
  spec.t_f = in_unit(cell.f_us, in_ms);
  spec.t_b = in_unit(cell.b_us, in_ms);
  spec.t_w = in_unit(cell.w_us, in_ms);
  spec.t_comm = {in_unit(cell.comm_us, in_ms)};
  spec.mem_f = {2};  // per device: one unit per chunk
  spec.mem_b = {0};
  spec.mem_w = {-2};
  spec.mem_limit = zb::MemoryLimit{static_cast<double>(limit), false};
  spec.time_unit = in_ms ? zb::TimeUnit::ms : zb::TimeUnit::us;
  return spec.build("random V cell");
}

// One V generator's frontier (span by limit, in chunk activations) over the random V problems.
struct VTally {
  long steps = 0, rising = 0, points = 0, unit_mismatches = 0;
  double max_rise = 0;
  std::string worst;
};

void print_v_table(int problems, unsigned seed) {
  using Generate = std::function<zb::Schedule(const zb::Problem&)>;
  struct VGenerator {
    const char* name;
    zb::Placement placement;
    Generate generate;
  };
  auto zb_auto = [](const zb::Problem& problem) { return zb::auto_schedule(problem).schedule; };
  const VGenerator generators[] = {
      {"zb-v", zb::Placement::vshape, [](const zb::Problem& problem) { return zb::zb_v_greedy(problem).schedule; }},
      {"v-auto", zb::Placement::vshape, [](const zb::Problem& problem) { return zb::make_v_auto(problem); }},
      {"zb-auto --placement vshape", zb::Placement::vshape, zb_auto},
      {"zb-auto --placement interleaved", zb::Placement::interleaved, zb_auto},
  };
  fmt::print("\nV placement over {} random problems (seed {}, p in 4/6/8, m in p..3p, per-chunk costs half the "
             "1.5B ones +-30%, limits V-Min's memory..3p chunk activations step 1)\n\n",
             problems, seed);
  fmt::print("| generator | frontier steps | rising steps | max rise | unit mismatches (points) | wall time |\n");
  fmt::print("|---|---|---|---|---|---|\n");
  for (const auto& [name, placement, generate] : generators) {
    std::mt19937 rng(seed);
    VTally tally;
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < problems; ++k) {
      const RandomCell cell = random_v_cell(rng);
      double previous = -1;  // the span at the limit before, -1: none (refused or the first)
      for (int limit = 2 * ((cell.p + 4) / 3); limit <= 3 * cell.p; ++limit) {
        const zb::Problem ms = build_v(cell, true, limit, placement);
        std::optional<zb::Schedule> schedule;
        try {
          schedule = generate(ms);
        } catch (const zb::Error&) {
          previous = -1;  // refused (below the generator's warm-up): no step across it
          continue;
        }
        ++tally.points;
        const double span = zb::evaluate(ms, *schedule, {.record_spans = false, .record_transfers = false,
                                                         .record_memory = false})
                                .metrics.span;
        if (previous > 0) {
          ++tally.steps;
          const double rise = span / previous - 1;
          if (span > previous + 1e-6) {
            ++tally.rising;
            if (rise > tally.max_rise) {
              tally.max_rise = rise;
              tally.worst = fmt::format("cell {} (p={} m={}): {:.3f} ms at {}, {:.3f} ms at {}", k, cell.p, cell.m,
                                        previous, limit - 1, span, limit);
            }
          }
        }
        previous = span;
        std::string in_us;
        try {
          in_us = zb::to_text(generate(build_v(cell, false, limit, placement)));
        } catch (const zb::Error&) {
          in_us = "refused";
        }
        tally.unit_mismatches += in_us != zb::to_text(*schedule) ? 1 : 0;
      }
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("| {} | {} | {} | {:.2f}% | {} of {} | {:.1f} s |\n", name, tally.steps, tally.rising,
               100 * tally.max_rise, tally.unit_mismatches, tally.points, seconds);
    if (!tally.worst.empty()) fmt::print("\n{} largest rise: {}\n\n", name, tally.worst);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int problems = argc > 1 ? std::atoi(argv[1]) : 1000;
  const unsigned seed = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 17u;
  const int v_problems = argc > 3 ? std::atoi(argv[3]) : 100;
  std::mt19937 rng(seed);
  zb::FrontierOptions options;  // 1p..3p in steps of p/8: 17 points, 16 steps
  long steps = 0, rising = 0, unit_mismatch_points = 0, unit_mismatch_cells = 0, points = 0;
  double max_rise = 0;
  std::string worst;
  const auto start = std::chrono::steady_clock::now();
  for (int k = 0; k < problems; ++k) {
    const RandomCell cell = random_cell(rng);
    const zb::Problem ms = build(cell, true);
    const zb::Problem us = build(cell, false);
    const auto frontier = zb::memory_frontier(ms, options);
    for (std::size_t i = 1; i < frontier.size(); ++i) {
      if (!frontier[i - 1].auto_feasible || !frontier[i].auto_feasible) continue;
      ++steps;
      const double rise = frontier[i].auto_span / frontier[i - 1].auto_span - 1;
      // A rise beyond float noise (the spans are sums of whole microseconds).
      if (frontier[i].auto_span > frontier[i - 1].auto_span + 1e-6) {
        ++rising;
        if (rise > max_rise) {
          max_rise = rise;
          worst = fmt::format("cell {} (p={} m={}): {:.3f} ms at {:g}p, {:.3f} ms at {:g}p", k, cell.p, cell.m,
                              frontier[i - 1].auto_span, frontier[i - 1].limit_times_p, frontier[i].auto_span,
                              frontier[i].limit_times_p);
        }
      }
    }
    // The same problem in us: the same schedule at every limit of the frontier.
    bool cell_differs = false;
    for (const zb::FrontierPoint& point : frontier) {
      if (!point.auto_feasible) continue;
      ++points;
      const zb::AutoResult a = zb::auto_schedule(ms, point.limit);
      const zb::AutoResult b = zb::auto_schedule(us, point.limit);
      if (zb::to_text(a.schedule) != zb::to_text(b.schedule)) {
        ++unit_mismatch_points;
        cell_differs = true;
      }
    }
    unit_mismatch_cells += cell_differs ? 1 : 0;
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("zb-auto frontier over {} random problems (seed {}, p in 4/8/16, m in p..4p, paper 1.5B costs +-30%, "
             "limits 1p..3p step p/8)\n\n",
             problems, seed);
  fmt::print("| frontier steps | rising steps | max rise | unit mismatches (points) | unit mismatches (problems) | wall time |\n");
  fmt::print("|---|---|---|---|---|---|\n");
  fmt::print("| {} | {} | {:.2f}% | {} of {} | {} of {} | {:.1f} s |\n", steps, rising, 100 * max_rise,
             unit_mismatch_points, points, unit_mismatch_cells, problems, seconds);
  if (!worst.empty()) fmt::print("\nlargest rise: {}\n", worst);
  print_v_table(v_problems, seed);
  return 0;
}
