// The offload pass (see offload_pass.h).
#include "sim/core/offload_pass.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/core/evaluator.h"
#include "sim/core/pass_time.h"
#include "sim/support/error.h"

namespace zb {

namespace {

// PipeOffload's skip rule: a lifespan shorter than this many round trips is not offloaded.
constexpr double kMinRoundTrips = 3;

struct Timed {
  double start = 0;
  double end = 0;
};

}  // namespace

Schedule with_offload(const Problem& problem, const Schedule& schedule, int offload_chunks, std::string_view context) {
  if (offload_chunks < 0 || offload_chunks > problem.chunks) {
    throw InputError(fmt::format("{}: offload of {} chunks: expected 0..{} (the chunks per device)", context,
                                 offload_chunks, problem.chunks));
  }
  if (offload_chunks == 0) return schedule;
  if (problem.t_offload.empty()) {
    throw InputError(fmt::format("{}: the problem gives no copy time for offloads (--t-offload, or a model-driven "
                                 "scenario on hardware with a host link)",
                                 context));
  }
  if (has_copies(schedule)) {
    throw InputError(fmt::format("{}: schedule '{}' already offloads", context, schedule.name));
  }
  const Trace base = evaluate(problem, schedule, {.record_spans = true, .record_transfers = false, .record_memory = false});
  Schedule out = schedule;
  out.name = fmt::format("{}+offload{}", schedule.name, offload_chunks);
  // Each device's compute spans, in its list's order.
  std::vector<std::vector<Timed>> timed(static_cast<std::size_t>(schedule.device_count()));
  for (const Span& span : base.spans) {
    if (span.stream == Stream::compute && span.step == 0) timed[static_cast<std::size_t>(span.device)].push_back({span.start, span.end});
  }
  for (int d = 0; d < schedule.device_count(); ++d) {
    const std::vector<Action>& actions = schedule.devices[static_cast<std::size_t>(d)];
    const std::vector<Timed>& times = timed[static_cast<std::size_t>(d)];
    // Where each offloaded (chunk, microbatch)'s backward (B or BW) is in the list; kNone: nowhere.
    constexpr std::size_t kNone = SIZE_MAX;
    const auto cell = [&](const Action& a) {
      return static_cast<std::size_t>(a.chunk) * static_cast<std::size_t>(problem.microbatches) +
             static_cast<std::size_t>(a.microbatch);
    };
    std::vector<std::size_t> backward_at(static_cast<std::size_t>(offload_chunks) * problem.microbatches, kNone);
    for (std::size_t k = 0; k < actions.size(); ++k) {
      const Action& a = actions[k];
      if ((a.pass == Pass::B || a.pass == Pass::BW) && a.chunk < offload_chunks && a.microbatch < problem.microbatches)
        if (backward_at[cell(a)] == kNone) backward_at[cell(a)] = k;
    }
    // after[k]: the copies that go right after action k.
    std::vector<std::vector<Action>> after(actions.size());
    for (std::size_t f = 0; f < actions.size(); ++f) {
      const Action& forward = actions[f];
      if (forward.pass != Pass::F || forward.chunk >= offload_chunks || forward.microbatch >= problem.microbatches) continue;
      const std::size_t b = backward_at[cell(forward)];
      if (b == kNone || b < f) continue;  // the validator names what is missing or out of order
      const int stage = problem.stage_of(d, forward.chunk);
      const double copy = pass_time(problem, Pass::O, stage);
      if (times[b].start - times[f].end <= kMinRoundTrips * 2 * copy) continue;
      // The last compute before the backward that ends by the reload's latest issue time (a
      // device's compute ends in list order), else right after the forward.
      const double issue_by = times[b].start - (times[b].end - times[b].start) - copy;
      const auto later = std::upper_bound(times.begin() + static_cast<std::ptrdiff_t>(f) + 1,
                                          times.begin() + static_cast<std::ptrdiff_t>(b), issue_by,
                                          [](double time, const Timed& t) { return time < t.end; });
      const std::size_t r = static_cast<std::size_t>(later - times.begin()) - 1;
      after[f].push_back({Pass::O, forward.microbatch, forward.chunk});
      after[r].push_back({Pass::L, forward.microbatch, forward.chunk});
    }
    std::vector<Action>& placed = out.devices[static_cast<std::size_t>(d)];
    placed.clear();
    for (std::size_t k = 0; k < actions.size(); ++k) {
      placed.push_back(actions[k]);
      // Never between the two parts of an overlapped pair.
      std::vector<Action>& copies = after[k];
      if (actions[k].overlap_next && k + 1 < actions.size()) {
        after[k + 1].insert(after[k + 1].begin(), copies.begin(), copies.end());
        continue;
      }
      placed.insert(placed.end(), copies.begin(), copies.end());
    }
  }
  return out;
}

}  // namespace zb
