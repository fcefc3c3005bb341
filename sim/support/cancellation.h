// A request to stop long work early, from outside it: Python's Ctrl-C (the module's wait loop sees
// the signal and asks the work running beside it to stop). Long loops check it where they hand out
// work (parallel_for, before each index), so a sweep, a plan search or a validation stops within
// one point. The command line needs none of this: SIGINT ends the process.
#pragma once

#include <stdexcept>

namespace zb {

// What a cancelled loop throws; the caller that asked knows why.
class Cancelled : public std::runtime_error {
 public:
  Cancelled() : std::runtime_error("cancelled") {}
};

void request_cancel() noexcept;
void clear_cancel() noexcept;
bool cancel_requested() noexcept;

inline void throw_if_cancelled() {
  if (cancel_requested()) throw Cancelled();
}

}  // namespace zb
