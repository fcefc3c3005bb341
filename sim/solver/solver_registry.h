// Registers the automatic schedules (zb-auto, zb-1p, zb-2p and, with CBC, zb-ilp) by name.
#pragma once

#include "../schedule/generator_registry.h"

namespace zb {

// Adds zb-auto, zb-1p, zb-2p and (when built with CBC) zb-ilp, all with uses_memory_limit = true.
void register_solver_generators(GeneratorRegistry& registry);

// Whether zb-ilp is available in this build (COIN-OR CBC found at configure time).
bool ilp_available();

}  // namespace zb
