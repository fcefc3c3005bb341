// Registers the automatic schedules (zb-v, v-min, v-half, v-auto, zb-auto, zb-1p, zb-2p and, with
// CBC, zb-ilp) by name.
#pragma once

#include "sim/core/generators/generator_registry.h"

namespace zb {

struct SolverGeneratorOptions {
  double ilp_time_limit_s = 60;  // zb-ilp's wall-clock safety net (its budget is nodes)
};

// Adds the V family zb-v, v-min, v-half, v-auto, then zb-auto, zb-1p, zb-2p and (when built with
// CBC) zb-ilp; all but v-min and v-half have uses_memory_limit = true.
// An infeasible memory limit makes the generators throw ScheduleError naming the limit (v-auto: an
// InputError naming the smallest limit that fits).
void register_solver_generators(GeneratorRegistry& registry, const SolverGeneratorOptions& options = {});

// Whether zb-ilp is available in this build (COIN-OR CBC found at configure time).
bool ilp_available();

}  // namespace zb
