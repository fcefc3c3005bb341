// The entry of libzbsim_simgrid.so (simgrid_module.h): the simulation child's work, tagged.
#include "sim/simgrid/detail/simgrid_module.h"

#include "sim/simgrid/detail/result_codec.h"
#include "sim/simgrid/detail/simulation.h"
#include "sim/simgrid/detail/tagged_result.h"

namespace {

std::string simulate(const zb::Problem& problem, const zb::Schedule& schedule, const zb::engine::EnginePlan& plan,
                     const zb::SimgridOptions& options) {
  return zb::engine::tagged_result(
      [&] { return zb::engine::encode_result(zb::engine::simulate_here(problem, schedule, plan, options)); });
}

}  // namespace

extern "C" __attribute__((visibility("default"))) const zb::ModuleHeader* zbsim_module() {
  static const zb::engine::SimgridModule module{{zb::engine::kSimgridModuleName, ZB_MODULE_BUILD_ID}, simulate};
  return &module.header;
}
