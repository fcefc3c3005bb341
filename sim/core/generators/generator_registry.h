// Schedule generators by name: pure functions Problem -> Schedule behind one registry.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/problem.h"
#include "sim/core/schedule.h"

namespace zb {

using GeneratorFn = std::function<Schedule(const Problem&)>;

// What chunk counts a generator accepts.
enum class ChunkSupport { single, multi, any };

struct GeneratorInfo {
  std::string name;
  std::string summary;
  ChunkSupport chunks = ChunkSupport::single;
  bool uses_memory_limit = false;
  GeneratorFn make;
  // Slow enough (seconds: the ILP) that interactive front ends run it on a worker thread.
  bool long_running = false;
  // The placement the generator builds for (the V schedules: vshape); nullopt: the problem's.
  std::optional<Placement> placement = std::nullopt;
};

class GeneratorRegistry {
 public:
  // Adds or replaces a generator.
  void add(GeneratorInfo info);
  const GeneratorInfo* find(std::string_view name) const;
  // Throws InputError listing the known names.
  const GeneratorInfo& get(std::string_view name) const;
  std::vector<std::string> names() const;  // in registration order

  // The handcrafted generators of sim/core/generators: gpipe, 1f1b, 1f1b-i, zb-h1, zb-h2.
  static GeneratorRegistry with_builtins();

 private:
  std::vector<GeneratorInfo> generators_;
};

// Looks up the generator, checks the problem's chunk count against what it accepts, runs it.
Schedule generate(const GeneratorRegistry& registry, std::string_view name, const Problem& problem);

}  // namespace zb
