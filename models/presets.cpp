// Preset lookup: names resolve under the presets folder, paths relative to the scenario's folder.
#include "models/presets.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdlib>

#include "models/errors.h"

namespace zb::models {

namespace fs = std::filesystem;

fs::path presets_dir() {
  if (const char* env = std::getenv("ZB_MODELS_DIR"); env != nullptr && *env != '\0') return fs::path(env);
#ifdef ZB_MODELS_DIR
  return fs::path(ZB_MODELS_DIR);
#else
  return fs::path("models");
#endif
}

std::vector<std::string> preset_names(std::string_view kind) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(presets_dir() / kind, ec)) {
    if (entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

namespace {

// A name the file system cannot even look up (too long, a bad component) is simply not there:
// the caller says "no such preset", not an internal error.
bool file_exists(const fs::path& path) {
  std::error_code error;
  return fs::exists(path, error);
}

}  // namespace

PresetRef resolve_preset(std::string_view kind, const nlohmann::json& value, const fs::path& base_dir,
                         std::string_view context, const ReadJsonFile& read) {
  PresetRef ref;
  if (value.is_object()) {
    ref.label = value.contains("name") && value["name"].is_string() ? value["name"].get<std::string>() : "inline";
    ref.object = value;
    return ref;
  }
  if (!value.is_string() || value.get<std::string>().empty()) {
    throw InputError(fmt::format("{} is {}: expected a preset name, a path to a JSON file, or an object", context,
                                 value.dump()));
  }
  const std::string text = value.get<std::string>();
  ref.label = text;
  const bool is_path = text.find('/') != std::string::npos || text.ends_with(".json");
  if (is_path) {
    fs::path path(text);
    if (path.is_relative() && !base_dir.empty() && file_exists(base_dir / path)) path = base_dir / path;
    if (!file_exists(path)) throw InputError(fmt::format("{} is '{}': no such file", context, excerpt(text)));
    ref.path = path;
  } else {
    ref.path = presets_dir() / kind / (text + ".json");
    if (!file_exists(ref.path)) {
      throw InputError(fmt::format("{} is '{}': no such preset in {} (known: {})", context, excerpt(text),
                                   (presets_dir() / kind).string(), fmt::join(preset_names(kind), ", ")));
    }
  }
  ref.object = read(ref.path, context);
  if (!ref.object.is_object()) {
    throw InputError(fmt::format("{}: {} must hold a JSON object", context, ref.path.string()));
  }
  return ref;
}

}  // namespace zb::models
