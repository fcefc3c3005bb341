// What a job launcher (Slurm, Open MPI, PMI) tells a process through its environment.
#include "exec/multiprocess/launcher_env.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <cstring>

#include "sim/support/error.h"

namespace zb::exec {

const char* process_env(const char* name) { return std::getenv(name); }

std::optional<EnvIndex> first_env_index(std::initializer_list<const char*> names, const EnvLookup& env) {
  for (const char* name : names) {
    const char* value = env(name);
    if (value == nullptr || *value == '\0') continue;
    int index = 0;
    const char* end = value + std::strlen(value);
    const auto [ptr, ec] = std::from_chars(value, end, index);
    if (ec != std::errc() || ptr != end || index < 0) {
      throw InputError(fmt::format("environment variable {}='{}': expected a number >= 0", name, value));
    }
    return EnvIndex{name, index};
  }
  return std::nullopt;
}

}  // namespace zb::exec
