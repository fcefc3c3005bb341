// Finding preset files (transformers, hardware, networks, clusters) by name or path.
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace zb::models {

// The folder holding transformers/, hardware/, network/ and clusters/: $ZB_MODELS_DIR when set,
// otherwise the source tree's models/ folder (fixed at build time).
std::filesystem::path presets_dir();

// Reads a preset file whole as JSON. models/ finds preset files but leaves reading them to the
// floors above, which give every input file the same size and depth limits and read each one once
// per process (sim/app/catalog/preset_files.h). `context` starts the messages.
using ReadJsonFile = std::function<nlohmann::json(const std::filesystem::path& path, std::string_view context)>;

// A preset read from disk (or given inline).
struct PresetRef {
  std::string label;           // how the user named it: the preset name, the path, or "inline"
  std::filesystem::path path;  // empty for inline objects
  nlohmann::json object;
};

// `value` is a preset name ("llama3-8b"), a path to a JSON file (contains '/' or ends in .json;
// relative paths are tried against base_dir first, then the working directory), or an inline
// object. `kind` is the subfolder ("transformers", "hardware", "network", "clusters").
// Throws InputError naming `context` and the value, listing the known names for a bad name.
PresetRef resolve_preset(std::string_view kind, const nlohmann::json& value, const std::filesystem::path& base_dir,
                         std::string_view context, const ReadJsonFile& read);

// Names of the presets of a kind, sorted.
std::vector<std::string> preset_names(std::string_view kind);

}  // namespace zb::models
