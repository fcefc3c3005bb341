// The FIFO-channel rule: every stage boundary delivers its messages in the order they were sent.
#pragma once

#include <optional>
#include <string>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

// Stage boundaries are FIFO channels, as NCCL's in-order send/recv matching (and the executor)
// make them: stage s+1 must run its F in the order stage s produces them, and stage s its B/BW in
// the order stage s+1 produces gradients. Every generator's schedule does; a hand-written or
// imported one might not. Returns the first violation (boundary, both orders, first position
// where they differ), or nullopt. Part of check_schedule, so every engine gives one verdict.
std::optional<std::string> channel_order_violation(const Problem& problem, const Schedule& schedule);

}  // namespace zb
