// The simulator's errors: the house's vocabulary (models/errors.h: zb::Error, InputError for bad
// input with exit code 2, excerpt) and the schedule's own.
#pragma once

#include "models/errors.h"

namespace zb {

// A schedule that cannot run: missing actions, wrong order, deadlock, memory over the limit.
class ScheduleError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace zb
