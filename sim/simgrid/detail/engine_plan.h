// What each SimGrid compute actor runs: the schedule resolved into stages, inputs and outputs.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/core/action.h"
#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb::engine {

// A one-way message stream across a device boundary: activations of stage `boundary` going
// forward to stage boundary+1, or gradients of stage boundary+1 going backward to `boundary`.
struct Channel {
  int boundary = 0;
  bool backward = false;
  int producer = 0;  // device
  int consumer = 0;  // device
  double t_comm = 0;  // the problem's delay across the boundary (the ideal network's latency)
};

// Where an action's input comes from.
enum class InputKind : std::uint8_t {
  none,     // stage 0 forward
  local,    // produced earlier on the same device: ready when the device reaches it
  channel,  // a message on `input_channel` carrying `microbatch`
  never,    // produced later on the same device, or not at all: the device is stuck here
};

struct PlannedAction {
  Action action;
  int stage = 0;
  double time = 0;  // duration in the problem's time unit; an overlapped pair's part: its share of the block
  InputKind input = InputKind::none;
  int input_channel = -1;
  int output_channel = -1;  // -1: no message (W, or the consumer is on the same device)
};

struct EnginePlan {
  std::vector<std::vector<PlannedAction>> devices;  // devices[d][step]
  std::vector<Channel> channels;
  std::size_t action_count = 0;
};

// Resolves every action. Throws ScheduleError naming the schedule, device and step for actions
// outside the problem (chunk, microbatch) and for an action scheduled twice. Missing producers
// are not errors here: the consumer is planned as waiting, and the simulation reports the deadlock.
EnginePlan make_engine_plan(const Problem& problem, const Schedule& schedule);

}  // namespace zb::engine
