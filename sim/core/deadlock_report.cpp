// Renders the stuck state of a dry run as a readable grid.
#include "sim/core/deadlock_report.h"

#include <fmt/format.h>

#include <algorithm>

namespace zb {

namespace {

// What the action waits for, in words.
std::string needs(const Problem& problem, int device, const Action& action) {
  if (action.chunk < 0 || action.chunk >= problem.chunks) return "its chunk does not exist";
  const int stage = problem.stage_of(device, action.chunk);
  const StagePath path = problem.path(action.microbatch);
  if (!path.contains(stage)) return fmt::format("nothing: microbatch {} does not run stage {}", action.microbatch, stage);
  switch (action.pass) {
    case Pass::F:
      if (stage == path.first) return "nothing (it should be runnable)";
      return fmt::format("F{} of stage {} on d{}", action.microbatch, stage - 1, problem.device_of_stage(stage - 1));
    case Pass::B:
    case Pass::BW:
      if (stage == path.last) return fmt::format("F{} of stage {} on d{}", action.microbatch, stage, device);
      return fmt::format("the backward of microbatch {} from stage {} on d{}", action.microbatch, stage + 1,
                         problem.device_of_stage(stage + 1));
    case Pass::W:
      return fmt::format("B{} of stage {} on d{}", action.microbatch, stage, device);
    case Pass::O:
      return fmt::format("F{} of stage {} on d{}", action.microbatch, stage, device);
    case Pass::L:
      return fmt::format("O{} of stage {} on d{}", action.microbatch, stage, device);
  }
  return "?";
}

}  // namespace

std::string deadlock_report(const Problem& problem, const Schedule& schedule,
                            const std::vector<std::size_t>& position) {
  constexpr std::size_t kContext = 4;  // steps shown before the earliest and after the latest stuck one
  std::size_t first = SIZE_MAX;
  std::size_t last = 0;
  int stuck = 0;
  for (int d = 0; d < schedule.device_count(); ++d) {
    if (position[d] < schedule.devices[d].size()) {
      first = std::min(first, position[d]);
      last = std::max(last, position[d]);
      ++stuck;
    }
  }
  if (stuck == 0) return "no device is stuck";
  const std::size_t begin = first > kContext ? first - kContext : 0;
  std::size_t end = last + kContext + 1;
  for (const auto& list : schedule.devices) end = std::min(end, std::max(list.size(), last + 1));

  std::string out = fmt::format("deadlock: {} device(s) cannot start their next action (marked [..] and <-- here)\n",
                                stuck);
  constexpr int kWidth = 8;
  out += fmt::format("{:>6}", "step");
  if (begin > 0) out += fmt::format("{:>{}}", "...", kWidth);
  for (std::size_t step = begin; step < end; ++step) out += fmt::format("{:>{}}", step, kWidth);
  out += '\n';
  for (int d = 0; d < schedule.device_count(); ++d) {
    const auto& list = schedule.devices[d];
    out += fmt::format("{:>6}", fmt::format("d{}:", d));
    if (begin > 0) out += fmt::format("{:>{}}", "...", kWidth);
    for (std::size_t step = begin; step < end; ++step) {
      std::string cell;
      if (step < list.size()) {
        cell = to_token(list[step]);
        if (step == position[d]) cell = "[" + cell + "]";
      }
      out += fmt::format("{:>{}}", cell, kWidth);
    }
    if (end < list.size()) out += " ...";
    if (position[d] < list.size()) {
      const Action& action = list[position[d]];
      out += fmt::format("   <-- here: {} waits for {}", to_token(action), needs(problem, d, action));
    } else {
      out += "   (finished)";
    }
    out += '\n';
  }
  return out;
}

}  // namespace zb
