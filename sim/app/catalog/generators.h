// What schedules exist: the one list of generators that zbsim, zbview and zbexec offer.
#pragma once

#include <string>

#include "sim/core/generators/generator_registry.h"

namespace zb::catalog {

// The handcrafted generators (GeneratorRegistry::with_builtins) and the solver's (zb-auto, zb-1p,
// zb-2p, and zb-ilp when CBC was built). A new generator registers in one of those two places
// and appears in every front end.
const GeneratorRegistry& generators();

// "gpipe, 1f1b, ..." for --help texts.
std::string generator_list();

}  // namespace zb::catalog
