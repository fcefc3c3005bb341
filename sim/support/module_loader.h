// Optional parts built as modules (SimGrid, CBC) that a process loads with dlopen only when a
// command uses them, so that starting zbsim costs none of their libraries: where modules are
// looked for, the check that one belongs to this build, and the one loader.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace zb {

// What every module's entry returns first. Modules exchange C++ objects of this build (Problem,
// Schedule, ...) with their host, so a module is used only when it was built with it.
struct ModuleHeader {
  const char* name;      // "simgrid", "cbc": the module it claims to be
  const char* build_id;  // kModuleBuildId of the build that made it
};

// The project version and the build folder: two builds never share their modules.
extern const char* const kModuleBuildId;

// The symbol every module exports: a function without arguments returning a pointer to a struct
// that starts with a ModuleHeader (the module's own interface follows it).
inline constexpr const char* kModuleEntrySymbol = "zbsim_module";

// Where modules are looked for, in order: $ZBSIM_MODULE_DIR alone when it is set; else the
// running executable's folder, the installed layout (<prefix>/bin/zbsim beside
// <prefix>/lib/zbsim/), and this build's module folder (for the tests and front ends run from
// the build tree).
std::vector<std::filesystem::path> module_search_path();

// Loads lib<file_stem>.so (e.g. "zbsim_simgrid") once per process, thread-safe; later calls
// return the same entry. `what` names the part in messages ("SimGrid engine"). Throws Error when
// no folder has the file, when it cannot be loaded (the loader's reason) or when it is not this
// build's module `name`. Call it before forking: children inherit the loaded module, so each
// fork costs no loading.
const ModuleHeader& load_module(std::string_view what, std::string_view file_stem, std::string_view name);

}  // namespace zb
