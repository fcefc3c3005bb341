// Throughput figures of a model-driven row (docs/design.md section 8): samples per GPU per second,
// tokens per second and MFU in both optimizer modes, and the memory of the fullest device.
#pragma once

#include "sim/app/catalog/scenario.h"
#include "sim/app/catalog/run_row.h"
#include "sim/core/problem.h"

namespace zb::catalog {

// Appends to a row that ran (and has the step times, engines.h) `samples_per_s_per_gpu`,
// `tokens_per_s` and `mfu`, each unsuffixed (the schedule's normal optimizer mode, like
// `step_time`), `_sync` and `_post_validation`, `memory_per_device_GB` (static memory plus the
// activation peak of each device, for the row's own chunks and placement) and `memory_GB` (its
// fullest device; the same in both modes: a device's peak depends only on its own
// order, section 3). Nothing for direct problems, for rows without metrics, for a time unit that
// is not one of seconds, or (memory_GB) when the memory deltas were given by hand.
void add_throughput_extras(const Scenario& scenario, const Problem& problem, ResultRow& row);

}  // namespace zb::catalog
