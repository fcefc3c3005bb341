// Builds the CLI's generator registry once.
#include "registry.h"

#ifdef ZB_HAVE_SOLVER
#include "solver_registry.h"
#endif

namespace zb::cli {

const GeneratorRegistry& cli_registry() {
  static const GeneratorRegistry registry = [] {
    GeneratorRegistry r = GeneratorRegistry::with_builtins();
    // Optional parts register their generators here (zb-auto, zb-ilp, ...).
#ifdef ZB_HAVE_SOLVER
    register_solver_generators(r);
#endif
    return r;
  }();
  return registry;
}

}  // namespace zb::cli
