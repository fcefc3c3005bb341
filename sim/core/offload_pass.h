// Activation offload added to any schedule: an offload (O) after each forward of the chosen chunks
// and a reload (L) early enough before its backward, placed from the schedule's own timing.
#pragma once

#include <string_view>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

// Offloads the activations of chunks 0..offload_chunks-1 on every device (the earliest chunks,
// whose activations live longest: PipeOffload's choice), as PipeOffload places its copies:
// - each O right after its F (the copy starts when the forward ends and the copy engine is free);
// - each L after the last compute that ends by (its backward's start - the backward's time - one
//   copy), timed by evaluating the schedule without copies: one pass of slack, so that a reload
//   that queues behind another rarely delays its backward;
// - nothing for a (chunk, microbatch) whose forward ends less than 3 round trips (6 t_offload)
//   before its backward starts: the copies would not pay (PipeOffload's skip rule).
// Needs the problem's t_offload; refuses a schedule that already has copies, in errors that start
// with `context` (the generator, or the flag). offload_chunks 0: the schedule as it is.
Schedule with_offload(const Problem& problem, const Schedule& schedule, int offload_chunks, std::string_view context);

}  // namespace zb
