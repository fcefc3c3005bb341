// Builds the CLI's generator registry once.
#include "registry.h"

namespace zb::cli {

const GeneratorRegistry& cli_registry() {
  static const GeneratorRegistry registry = [] {
    GeneratorRegistry r = GeneratorRegistry::with_builtins();
    // Optional parts register their generators here (zb-auto, zb-ilp, ...).
    return r;
  }();
  return registry;
}

}  // namespace zb::cli
