// dlopen of the optional parts' modules, found next to the executable or in this build (see module_loader.h).
#include "sim/support/module_loader.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "sim/support/error.h"

namespace zb {

// ZB_MODULE_BUILD_ID, ZB_MODULE_BUILD_DIR and ZB_MODULE_DIR_FROM_BIN come from sim/support/CMakeLists.txt.
const char* const kModuleBuildId = ZB_MODULE_BUILD_ID;

namespace {

std::filesystem::path executable_folder() {
  char self[PATH_MAX] = {};
  const ssize_t length = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (length <= 0) return {};
  return std::filesystem::path(std::string(self, static_cast<std::size_t>(length))).parent_path();
}

const ModuleHeader& open_module(std::string_view what, std::string_view file_stem, std::string_view name) {
  const std::string file = fmt::format("lib{}.so", file_stem);
  const std::vector<std::filesystem::path> folders = module_search_path();
  std::string tried;
  for (const std::filesystem::path& folder : folders) {
    const std::filesystem::path path = folder / file;
    std::error_code ignored;
    if (!std::filesystem::is_regular_file(path, ignored)) {
      tried += fmt::format("{}{}", tried.empty() ? "" : ", ", folder.string());
      continue;
    }
    // RTLD_LOCAL: the module's libraries (SimGrid, CBC) stay out of the host's symbol scope.
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      throw Error(fmt::format("{}: cannot load its module {}: {}", what, path.string(), ::dlerror()));
    }
    using Entry = const ModuleHeader* (*)();
    auto entry = reinterpret_cast<Entry>(::dlsym(handle, kModuleEntrySymbol));
    const ModuleHeader* header = entry != nullptr ? entry() : nullptr;
    if (header == nullptr || name != header->name || std::strcmp(header->build_id, kModuleBuildId) != 0) {
      throw Error(fmt::format("{}: {} is not the '{}' module of this build ({})", what, path.string(), name,
                              kModuleBuildId));
    }
    // Never unloaded: SimGrid and CBC keep static state, and forked children use the module.
    return *header;
  }
  throw Error(fmt::format("{}: its module {} is missing (looked in {}; set ZBSIM_MODULE_DIR to its folder)", what,
                          file, tried));
}

}  // namespace

std::vector<std::filesystem::path> module_search_path() {
  if (const char* dir = std::getenv("ZBSIM_MODULE_DIR"); dir != nullptr && *dir != '\0') return {dir};
  std::vector<std::filesystem::path> folders;
  if (const std::filesystem::path exe = executable_folder(); !exe.empty()) {
    folders.push_back(exe);
    folders.push_back((exe / ZB_MODULE_DIR_FROM_BIN).lexically_normal());
  }
  folders.emplace_back(ZB_MODULE_BUILD_DIR);
  return folders;
}

const ModuleHeader& load_module(std::string_view what, std::string_view file_stem, std::string_view name) {
  static std::mutex mutex;
  static std::map<std::string, const ModuleHeader*, std::less<>> loaded;
  const std::lock_guard lock(mutex);
  if (const auto found = loaded.find(file_stem); found != loaded.end()) return *found->second;
  const ModuleHeader& header = open_module(what, file_stem, name);
  loaded.emplace(std::string(file_stem), &header);
  return header;
}

}  // namespace zb
