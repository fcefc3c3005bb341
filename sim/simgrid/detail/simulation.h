// The child side of the SimGrid engine: one Engine, the platform, the actors, one run.
#pragma once

#include "sim/simgrid/detail/engine_plan.h"
#include "sim/simgrid/simgrid_engine.h"

namespace zb::engine {

// Runs the plan in this process and returns the trace (metrics not filled) and step times.
// Creates a SimGrid Engine, which a process may do only once: call it in a forked child
// (run_in_child). Throws ScheduleError on deadlock (with the stuck devices and the step grid),
// InputError for a platform that cannot be built, Error for failures inside actors.
SimgridResult simulate_here(const Problem& problem, const Schedule& schedule, const EnginePlan& plan,
                            const SimgridOptions& options);

}  // namespace zb::engine
