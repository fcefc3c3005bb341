// Checks a schedule before anything runs it: completeness, order, deadlock, memory.
#pragma once

#include <string>
#include <vector>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

struct ValidationReport {
  std::vector<std::string> errors;  // empty: valid
  // Per device: prefix sums of the deltas in list order; with offloads (whose frees wait for
  // their copies) the timed run's peaks, when the schedule is otherwise valid.
  std::vector<double> peak_memory;

  bool ok() const { return errors.empty(); }
  std::string message() const;  // all errors, one per line
};

// Whether peak memory is checked against the problem's limit. Callers that report an over-limit
// schedule as a status rather than an error skip it (peak_memory is filled either way).
enum class MemoryCheck { against_limit, skip };

// Whether the FIFO-channel rule (channel_order.h) is checked. Skipped only by executor tests that
// show the runtime's own check on receipt.
enum class ChannelCheck { fifo, skip };

// The schedule states no other placement or chunk count than the problem's; every (stage,
// microbatch) has one F and one B and W (or one BW), on the device that holds the stage; per
// device F < B < W; overlapped pairs are an F then a B or BW that does not need it; a dry run makes progress (otherwise the device x step grid with "<-- here");
// channels deliver in order; peak memory within the problem's limit when it has one (the one
// over-limit judgement of memory.h).
ValidationReport check_schedule(const Problem& problem, const Schedule& schedule,
                                MemoryCheck memory = MemoryCheck::against_limit,
                                ChannelCheck channels = ChannelCheck::fifo);

// check_schedule, throwing ScheduleError with the report when it is not ok.
void validate(const Problem& problem, const Schedule& schedule, MemoryCheck memory = MemoryCheck::against_limit,
              ChannelCheck channels = ChannelCheck::fifo);

// Peak activation memory per device implied by the order of actions (timing-independent).
std::vector<double> peak_memory_by_order(const Problem& problem, const Schedule& schedule);

}  // namespace zb
