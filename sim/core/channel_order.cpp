// The FIFO-channel rule (see channel_order.h).
#include "sim/core/detail/channel_order.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <vector>

namespace zb {

namespace {

// Microbatches of `stage`'s actions of the given kind (F, or any backward that sends a gradient).
std::vector<int> order_of(const Problem& problem, const Schedule& schedule, int stage, bool forward) {
  std::vector<int> order;
  const int device = problem.device_of_stage(stage);
  const int chunk = problem.chunk_of_stage(stage);
  for (const auto& action : schedule.devices[static_cast<std::size_t>(device)]) {
    if (action.chunk != chunk) continue;
    const bool is_forward = action.pass == Pass::F;
    const bool is_backward = action.pass == Pass::B || action.pass == Pass::BW;
    if ((forward && is_forward) || (!forward && is_backward)) order.push_back(action.microbatch);
  }
  return order;
}

std::optional<std::string> compare(const std::vector<int>& sent, int from_stage, const std::vector<int>& received,
                                   int to_stage, const char* what) {
  if (sent == received) return std::nullopt;
  std::size_t at = 0;
  while (at < sent.size() && at < received.size() && sent[at] == received[at]) ++at;
  return fmt::format(
      "channels deliver in order (like NCCL send/recv), but stage {} consumes {} in the order [{}] while stage {} "
      "sends them in the order [{}] (first difference at position {})",
      to_stage, what, fmt::join(received, ", "), from_stage, fmt::join(sent, ", "), at);
}

}  // namespace

std::optional<std::string> channel_order_violation(const Problem& problem, const Schedule& schedule) {
  const int stages = problem.stages();
  for (int s = 0; s + 1 < stages; ++s) {
    if (!problem.crosses(s)) continue;  // no microbatch goes from s to s+1: no channel
    if (auto error = compare(order_of(problem, schedule, s, true), s, order_of(problem, schedule, s + 1, true), s + 1,
                             "activations (F)")) {
      return error;
    }
    if (auto error = compare(order_of(problem, schedule, s + 1, false), s + 1, order_of(problem, schedule, s, false),
                             s, "gradients (B/BW)")) {
      return error;
    }
  }
  return std::nullopt;
}

}  // namespace zb
