// Checks that every channel delivers messages in the order its receiver consumes them.
#pragma once

#include "sim/schedule/problem.h"
#include "sim/schedule/schedule.h"

namespace zb::exec {

// The executor's channels are FIFO per stage boundary, like NCCL's in-order send/recv matching:
// stage s+1 must run its F in the order stage s produces them, and stage s its B/BW in the order
// stage s+1 produces gradients. Every generated schedule does; a hand-written one might not.
// Throws ScheduleError naming the boundary and the first position where the orders differ.
void check_channel_order(const zb::Problem& problem, const zb::Schedule& schedule);

}  // namespace zb::exec
