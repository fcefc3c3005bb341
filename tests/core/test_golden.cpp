// Golden text files for every generator at p=4, m=8. Regenerate on purpose with
// ZB_UPDATE_GOLDEN=1 and review the diff.
#include <gtest/gtest.h>

#include <cstdlib>

#include "sim/support/atomic_file.h"
#include "sim/core/generators/generator_registry.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

TEST(Golden, EveryGeneratorAtP4M8) {
  const auto registry = GeneratorRegistry::with_builtins();
  const bool update = std::getenv("ZB_UPDATE_GOLDEN") != nullptr;
  for (const auto& name : registry.names()) {
    const Problem problem = testing::generator_spec(registry.get(name), testing::uniform_spec(4, 8)).build();
    const std::string text = to_text(generate(registry, name, problem));
    const std::string path = testing::source_path("tests/core/golden/" + name + ".txt");
    if (update) write_file_atomically(path, text);
    EXPECT_EQ(read_file(path), text) << "golden file " << path << " differs; if intended, rerun with "
                                     << "ZB_UPDATE_GOLDEN=1 and review the diff";
  }
}

}  // namespace
}  // namespace zb
