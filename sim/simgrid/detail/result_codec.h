// Binary form of a SimgridResult, for the pipe from the simulation child to its parent.
#pragma once

#include <string>
#include <string_view>

#include "sim/simgrid/simgrid_engine.h"

namespace zb::engine {

// Everything but trace.metrics (the parent recomputes those). Native byte order: both ends are
// the same binary.
std::string encode_result(const SimgridResult& result);
// Throws Error when the bytes are truncated or malformed.
SimgridResult decode_result(std::string_view bytes);

}  // namespace zb::engine
