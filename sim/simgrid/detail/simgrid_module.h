// The interface of libzbsim_simgrid.so, the half of the engine that links SimGrid: the process
// that runs a simulation loads it (module_loader.h) only when it simulates, so that zbsim, zbview
// and zbexec start without SimGrid's and ns-3's libraries.
#pragma once

#include <string>

#include "sim/simgrid/detail/engine_plan.h"
#include "sim/simgrid/simgrid_engine.h"
#include "sim/support/module_loader.h"

namespace zb::engine {

inline constexpr const char* kSimgridModuleFile = "zbsim_simgrid";  // lib....so
inline constexpr const char* kSimgridModuleName = "simgrid";

struct SimgridModule {
  ModuleHeader header;
  // simulate_here (simulation.h) as a record of tagged_result.h: the encoded result
  // (result_codec.h) or the exception. Never throws. Creates a SimGrid Engine: call it in a
  // forked child.
  std::string (*simulate)(const Problem& problem, const Schedule& schedule, const EnginePlan& plan,
                          const SimgridOptions& options);
};

}  // namespace zb::engine
