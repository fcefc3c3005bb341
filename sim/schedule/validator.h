// Checks a schedule before anything runs it: completeness, order, deadlock, memory.
#pragma once

#include <string>
#include <vector>

#include "problem.h"
#include "schedule.h"

namespace zb {

struct ValidationReport {
  std::vector<std::string> errors;  // empty: valid
  std::vector<double> peak_memory;  // per device (order-based: prefix sums of the deltas)

  bool ok() const { return errors.empty(); }
  std::string message() const;  // all errors, one per line
};

// Every (stage, microbatch) has one F and one B and W (or one BW), on the device that holds the
// stage; per device F < B < W; a dry run makes progress (otherwise the device x step grid with
// "<-- here"); peak memory within the problem's limit when it has one.
ValidationReport check_schedule(const Problem& problem, const Schedule& schedule);

// check_schedule, throwing ScheduleError with the report when it is not ok.
void validate(const Problem& problem, const Schedule& schedule);

// Peak activation memory per device implied by the order of actions (timing-independent).
std::vector<double> peak_memory_by_order(const Problem& problem, const Schedule& schedule);

}  // namespace zb
