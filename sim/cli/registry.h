// The generators the CLI offers: the handcrafted ones plus what the optional parts add.
#pragma once

#include "generator_registry.h"

namespace zb::cli {

const GeneratorRegistry& cli_registry();

}  // namespace zb::cli
