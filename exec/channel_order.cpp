// Checks that every channel delivers messages in the order its receiver consumes them.
#include "exec/channel_order.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

#include "sim/schedule/error.h"

namespace zb::exec {

namespace {

// Microbatches of `stage`'s actions of the given kind (F, or any backward that sends a gradient).
std::vector<int> order_of(const zb::Problem& problem, const zb::Schedule& schedule, int stage,
                          bool forward) {
  std::vector<int> order;
  const int device = problem.device_of_stage(stage);
  const int chunk = problem.chunk_of_stage(stage);
  for (const auto& action : schedule.devices[static_cast<std::size_t>(device)]) {
    if (action.chunk != chunk) continue;
    const bool is_forward = action.pass == zb::Pass::F;
    const bool is_backward = action.pass == zb::Pass::B || action.pass == zb::Pass::BW;
    if ((forward && is_forward) || (!forward && is_backward)) order.push_back(action.microbatch);
  }
  return order;
}

void compare(const zb::Schedule& schedule, const std::vector<int>& sent, int from_stage,
             const std::vector<int>& received, int to_stage, const char* what) {
  if (sent == received) return;
  std::size_t at = 0;
  while (at < sent.size() && at < received.size() && sent[at] == received[at]) ++at;
  throw zb::ScheduleError(fmt::format(
      "schedule '{}': the executor's channels deliver in order (like NCCL send/recv), but stage "
      "{} consumes {} in the order [{}] while stage {} sends them in the order [{}] (first "
      "difference at position {})",
      schedule.name, to_stage, what, fmt::join(received, ", "), from_stage, fmt::join(sent, ", "), at));
}

}  // namespace

void check_channel_order(const zb::Problem& problem, const zb::Schedule& schedule) {
  const int stages = problem.stages();
  for (int s = 0; s + 1 < stages; ++s) {
    const auto forward_sent = order_of(problem, schedule, s, true);
    const auto forward_received = order_of(problem, schedule, s + 1, true);
    compare(schedule, forward_sent, s, forward_received, s + 1, "activations (F)");
    const auto backward_sent = order_of(problem, schedule, s + 1, false);
    const auto backward_received = order_of(problem, schedule, s, false);
    compare(schedule, backward_sent, s + 1, backward_received, s, "gradients (B/BW)");
  }
}

}  // namespace zb::exec
