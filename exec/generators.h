// The schedule generators the executor offers: the handcrafted ones and, when built, the solver's.
#pragma once

#include "sim/schedule/generator_registry.h"

namespace zb::exec {

// gpipe, 1f1b, 1f1b-i, zb-h1, zb-h2, plus zb-auto, zb-1p, zb-2p (and zb-ilp with CBC) when the
// solver library is part of the build.
const zb::GeneratorRegistry& exec_generators();

}  // namespace zb::exec
