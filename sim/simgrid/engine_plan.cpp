// Resolves a schedule into per-device plans for the SimGrid engine (pure: no SimGrid here).
#include "sim/simgrid/detail/engine_plan.h"

#include <fmt/format.h>

#include "sim/support/error.h"
#include "sim/core/pass_time.h"

namespace zb::engine {

namespace {

// Producers are keyed by what they produce: the forward output, the backward output (B or BW:
// a stage has one or the other for a microbatch) and the weight gradient.
enum Product { kForward = 0, kBackward = 1, kWeight = 2, kProducts = 3 };

Product product_of(Pass pass) {
  switch (pass) {
    case Pass::F: return kForward;
    case Pass::B:
    case Pass::BW: return kBackward;
    case Pass::W:
    case Pass::O:  // refused by make_engine_plan
    case Pass::L: return kWeight;
  }
  return kWeight;
}

struct Position {
  int device = -1;
  std::size_t step = 0;
};

}  // namespace

EnginePlan make_engine_plan(const Problem& problem, const Schedule& schedule) {
  const int p = problem.devices;
  const int m = problem.microbatches;
  const int stages = problem.stages();
  if (schedule.device_count() != p) {
    throw ScheduleError(fmt::format("schedule '{}' has {} devices but the problem has p={}", schedule.name,
                                    schedule.device_count(), p));
  }
  if (has_copies(schedule)) {
    throw InputError(fmt::format("schedule '{}' offloads activations (O and L actions): the SimGrid engine does not "
                                 "model host links yet; use --engine eval",
                                 schedule.name));
  }

  EnginePlan plan;
  // channel_of[2 * boundary + backward]: index into plan.channels, -1 inside one device.
  std::vector<int> channel_of(static_cast<std::size_t>(2 * stages), -1);
  for (int boundary = 0; boundary + 1 < stages; ++boundary) {
    if (!problem.crosses(boundary)) continue;
    const int low = problem.device_of_stage(boundary);
    const int high = problem.device_of_stage(boundary + 1);
    if (low == high) continue;
    for (const bool backward : {false, true}) {
      channel_of[static_cast<std::size_t>(2 * boundary + (backward ? 1 : 0))] = static_cast<int>(plan.channels.size());
      plan.channels.push_back({boundary, backward, backward ? high : low, backward ? low : high,
                               problem.t_comm[static_cast<std::size_t>(boundary)]});
    }
  }
  auto channel = [&](int boundary, bool backward) {
    return channel_of[static_cast<std::size_t>(2 * boundary + (backward ? 1 : 0))];
  };

  // First pass: where every product is made; actions outside the problem and duplicates are errors.
  std::vector<Position> made(static_cast<std::size_t>(kProducts) * stages * m);
  auto slot = [&](Product product, int stage, int microbatch) -> Position& {
    return made[(static_cast<std::size_t>(product) * stages + stage) * m + microbatch];
  };
  for (int d = 0; d < p; ++d) {
    const auto& actions = schedule.devices[static_cast<std::size_t>(d)];
    for (std::size_t step = 0; step < actions.size(); ++step) {
      const Action& action = actions[step];
      if (action.chunk < 0 || action.chunk >= problem.chunks || action.microbatch < 0 || action.microbatch >= m) {
        throw ScheduleError(fmt::format("schedule '{}': d{} step {}: action {} is outside the problem (m={}, chunks={})",
                                        schedule.name, d, step, to_token(action), m, problem.chunks));
      }
      const int stage = problem.stage_of(d, action.chunk);
      if (!problem.path(action.microbatch).contains(stage)) {
        throw ScheduleError(fmt::format("schedule '{}': d{} step {}: action {} is on stage {}, which microbatch {} "
                                        "does not run",
                                        schedule.name, d, step, to_token(action), stage, action.microbatch));
      }
      Position& position = slot(product_of(action.pass), stage, action.microbatch);
      if (position.device >= 0) {
        throw ScheduleError(fmt::format("schedule '{}': d{} step {}: {} of stage {} is already scheduled at d{} step {}",
                                        schedule.name, d, step, to_token(action), stage, position.device,
                                        position.step));
      }
      position = {d, step};
    }
  }

  // Second pass: inputs and outputs.
  plan.devices.resize(static_cast<std::size_t>(p));
  for (int d = 0; d < p; ++d) {
    const auto& actions = schedule.devices[static_cast<std::size_t>(d)];
    auto& planned = plan.devices[static_cast<std::size_t>(d)];
    planned.reserve(actions.size());
    for (std::size_t step = 0; step < actions.size(); ++step) {
      const Action& action = actions[step];
      PlannedAction item;
      item.action = action;
      item.stage = problem.stage_of(d, action.chunk);
      const int mb = action.microbatch;
      const StagePath path = problem.path(mb);
      item.time = pass_time(problem, action.pass, item.stage);
      // A same-device input is ready exactly when it was scheduled earlier in this list.
      auto local = [&](Product product, int stage) {
        const Position& position = slot(product, stage, mb);
        return position.device == d && position.step < step ? InputKind::local : InputKind::never;
      };
      switch (action.pass) {
        case Pass::F:
          if (item.stage > path.first) {
            item.input_channel = channel(item.stage - 1, false);
            item.input = item.input_channel >= 0 ? InputKind::channel : local(kForward, item.stage - 1);
          }
          if (item.stage < path.last) item.output_channel = channel(item.stage, false);
          break;
        case Pass::B:
        case Pass::BW:
          if (item.stage < path.last) {
            item.input_channel = channel(item.stage, true);
            item.input = item.input_channel >= 0 ? InputKind::channel : local(kBackward, item.stage + 1);
          } else {
            item.input = local(kForward, item.stage);
          }
          if (item.stage > path.first) item.output_channel = channel(item.stage - 1, true);
          break;
        case Pass::W:
          item.input = local(kBackward, item.stage);
          break;
        case Pass::O:
        case Pass::L: break;  // refused above
      }
      planned.push_back(item);
    }
    // An overlapped pair: each part takes its share of the block (the actor runs both at once).
    for (std::size_t step = 0; step + 1 < planned.size(); ++step) {
      PlannedAction& first = planned[step];
      if (!first.action.overlap_next) continue;
      PlannedAction& second = planned[++step];
      const BlockTimes block = overlapped_times(problem, first.action.pass, first.stage, second.action.pass, second.stage);
      first.time = block.first;
      second.time = block.second;
    }
    plan.action_count += actions.size();
  }
  return plan;
}

}  // namespace zb::engine
