// Rules every front end's command line follows (see command_line.h).
#include "sim/cli/common/command_line.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/support/error.h"

namespace zb::cli {

void refuse_empty_values(const boost::program_options::variables_map& values,
                         const boost::program_options::options_description& options) {
  for (const auto& [name, value] : values) {
    if (value.defaulted() || value.empty()) continue;
    const auto* option = options.find_nothrow(name, false);
    if (option == nullptr || option->semantic()->max_tokens() == 0) continue;
    bool empty = false;
    if (const auto* text = boost::any_cast<std::string>(&value.value())) {
      empty = text->empty();
    } else if (const auto* list = boost::any_cast<std::vector<std::string>>(&value.value())) {
      empty = std::any_of(list->begin(), list->end(), [](const std::string& item) { return item.empty(); });
    }
    if (empty) throw InputError(fmt::format("--{}: empty value (give one, or leave the option out)", name));
  }
}

namespace {

namespace fs = std::filesystem;

// A path as the file it names: its resolved form, or nothing for what cannot clash (a device, a
// folder, the standard-output "-").
std::optional<fs::path> file_identity(const std::string& path) {
  if (path.empty() || path == "-") return std::nullopt;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);
  if (!error && fs::exists(status) && !fs::is_regular_file(status)) return std::nullopt;
  const fs::path resolved = fs::weakly_canonical(fs::absolute(path, error), error);
  if (error) return std::nullopt;
  return resolved;
}

bool same_file(const fs::path& a, const fs::path& b) {
  if (a == b) return true;
  std::error_code error;
  return fs::equivalent(a, b, error) && !error;  // hard links; false when either is missing
}

// The text values of option `name`: one path, or the items of a list.
std::vector<std::string> texts_of(const boost::program_options::variable_value& value) {
  if (const auto* text = boost::any_cast<std::string>(&value.value())) return {*text};
  if (const auto* list = boost::any_cast<std::vector<std::string>>(&value.value())) return *list;
  return {};
}

}  // namespace

void refuse_clashing_paths(const boost::program_options::variables_map& values,
                           std::initializer_list<const char*> outputs) {
  struct Written {
    std::string flag;
    std::string path;
    fs::path file;
  };
  std::vector<Written> written;
  for (const char* flag : outputs) {
    if (!values.count(flag)) continue;
    for (const std::string& path : texts_of(values[flag])) {
      const auto file = file_identity(path);
      if (!file) continue;
      for (const Written& earlier : written) {
        if (same_file(earlier.file, *file)) {
          throw InputError(fmt::format("--{} and --{}: both write '{}' (give each output its own file)", earlier.flag,
                                       flag, path));
        }
      }
      written.push_back({flag, path, *file});
    }
  }
  for (const auto& [name, value] : values) {
    if (value.empty() || value.defaulted()) continue;
    if (std::any_of(outputs.begin(), outputs.end(), [&](const char* flag) { return name == flag; })) continue;
    for (const std::string& path : texts_of(value)) {
      std::error_code error;
      if (!fs::is_regular_file(path, error)) continue;  // only what exists can be read
      const auto file = file_identity(path);
      if (!file) continue;
      for (const Written& output : written) {
        if (same_file(output.file, *file)) {
          throw InputError(fmt::format("--{}: '{}' is also read as --{} (writing it would replace the input)",
                                       output.flag, output.path, name));
        }
      }
    }
  }
}

}  // namespace zb::cli
