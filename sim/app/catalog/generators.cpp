// The catalog's generator list, built once.
#include "sim/app/catalog/generators.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/solver/solver_registry.h"

namespace zb::catalog {

const GeneratorRegistry& generators() {
  static const GeneratorRegistry registry = [] {
    GeneratorRegistry r = GeneratorRegistry::with_builtins();
    register_solver_generators(r);
    return r;
  }();
  return registry;
}

std::string generator_list() { return fmt::format("{}", fmt::join(generators().names(), ", ")); }

}  // namespace zb::catalog
