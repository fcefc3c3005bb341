// What a job launcher (Slurm, Open MPI, PMI) tells a process through its environment.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>

namespace zb::exec {

// An environment variable's value, or null when unset: std::getenv, or a map in tests.
using EnvLookup = std::function<const char*(const char* name)>;
const char* process_env(const char* name);

struct EnvIndex {
  const char* name;  // the variable that gave it
  int value;
};

// The first of `names` that is set and not empty, read as an index (an integer >= 0). Throws
// InputError naming the variable and its value when it is not one.
std::optional<EnvIndex> first_env_index(std::initializer_list<const char*> names,
                                        const EnvLookup& env = process_env);

}  // namespace zb::exec
