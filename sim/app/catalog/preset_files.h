// How preset files are read for the cost model (models::ReadJsonFile): whole, under the limits of
// every input (sim/support/json_text.h), each file once per process (sim/support/kept_file.h).
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string_view>

namespace zb::catalog {

// The JSON of the preset file at `path`; InputError naming `context` and the path when it cannot
// be read or parsed.
nlohmann::json read_preset_file(const std::filesystem::path& path, std::string_view context);

}  // namespace zb::catalog
