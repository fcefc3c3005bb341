// The schedule generators the executor offers: the handcrafted ones and, when built, the solver's.
#include "exec/generators.h"

#ifdef ZB_EXEC_HAVE_SOLVER
#include "sim/solver/solver_registry.h"
#endif

namespace zb::exec {

const zb::GeneratorRegistry& exec_generators() {
  static const zb::GeneratorRegistry registry = [] {
    zb::GeneratorRegistry r = zb::GeneratorRegistry::with_builtins();
#ifdef ZB_EXEC_HAVE_SOLVER
    zb::register_solver_generators(r);
#endif
    return r;
  }();
  return registry;
}

}  // namespace zb::exec
