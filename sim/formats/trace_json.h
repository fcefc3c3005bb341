// Our trace file: {"meta", "devices", "spans", "memory", "metrics"}; written and read back.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <string_view>

#include "sim/core/trace.h"

namespace zb {

nlohmann::json to_json(const Trace& trace);
nlohmann::json to_json(const Metrics& metrics);
// Throws InputError naming `source` and the field when the file is malformed.
Trace trace_from_json(const nlohmann::json& object, std::string_view source);

}  // namespace zb
