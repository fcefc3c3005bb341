// Preset files read for the cost model (see preset_files.h).
#include "sim/app/catalog/preset_files.h"

#include <fmt/format.h>

#include "sim/support/json_text.h"
#include "sim/support/kept_file.h"

namespace zb::catalog {

nlohmann::json read_preset_file(const std::filesystem::path& path, std::string_view context) {
  return parse_json(read_file_kept(path.string()), fmt::format("{}: {}", context, path.string()));
}

}  // namespace zb::catalog
