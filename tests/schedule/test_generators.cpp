// Every generator produces a valid schedule over many shapes; the registry checks chunk support.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "sim/schedule/error.h"
#include "sim/schedule/evaluator.h"
#include "sim/schedule/generator_registry.h"
#include "tests/support/problems.h"
#include "sim/schedule/validator.h"

namespace zb {
namespace {

TEST(Generators, ValidForManyShapes) {
  const auto registry = GeneratorRegistry::with_builtins();
  for (const auto& name : registry.names()) {
    for (int p : {1, 2, 3, 4, 8}) {
      for (int m : {1, 2, 3, 4, 7, 8, 16, 17}) {
        for (int v : {1, 2, 3}) {
          const auto& info = registry.get(name);
          if ((info.chunks == ChunkSupport::single) != (v == 1)) continue;
          if (info.placement == Placement::vshape && v != 2) continue;
          if (name == "1f1b-i" && m % p != 0) continue;
          if (name == "dualpipe-v" && m < 2 * p) continue;
          SCOPED_TRACE(fmt::format("{} p={} m={} v={}", name, p, m, v));
          const Problem problem = testing::generator_spec(info, testing::uniform_spec(p, m, 1, 2, 1, 0.25), v).build();
          const Schedule schedule = generate(registry, name, problem);
          EXPECT_EQ(schedule.name, name);
          const ValidationReport report = check_schedule(problem, schedule);
          EXPECT_TRUE(report.ok()) << report.message();
          // Three actions per (stage, microbatch) when the backward is split (F, B, W), else two;
          // dualpipe-v splits only the backwards around its steady state.
          const bool split = name.starts_with("zb-");
          if (name != "dualpipe-v") {
            EXPECT_EQ(schedule.action_count(), static_cast<std::size_t>(p * v * m * (split ? 3 : 2)));
          }
        }
      }
    }
  }
}

TEST(Generators, InterleavedBeatsPlain1F1BAndUsesMoreMemory) {
  const auto registry = GeneratorRegistry::with_builtins();
  ProblemSpec spec = testing::uniform_spec(4, 8, 1.0, 1.0, 1.0);
  const Problem plain = spec.build();
  const Problem interleaved = spec.with_chunks(2).build();
  const Trace a = evaluate(plain, generate(registry, "1f1b", plain));
  const Trace b = evaluate(interleaved, generate(registry, "1f1b-i", interleaved));
  // Megatron: the bubble shrinks by the factor v.
  EXPECT_NEAR(b.metrics.span - b.metrics.work, (a.metrics.span - a.metrics.work) / 2, 1e-9);
  EXPECT_GT(b.metrics.peak_memory[0], a.metrics.peak_memory[0]);
}

TEST(Generators, RegistryRefusesWrongChunkCounts) {
  const auto registry = GeneratorRegistry::with_builtins();
  const Problem two_chunks = testing::uniform_problem(4, 8, 1, 1, 1, 0, 2);
  const Problem one_chunk = testing::uniform_problem(4, 8, 1, 1, 1);
  EXPECT_THROW(generate(registry, "zb-h1", two_chunks), InputError);
  EXPECT_THROW(generate(registry, "1f1b-i", one_chunk), InputError);
  EXPECT_THROW(generate(registry, "1f1b-i", testing::uniform_problem(4, 6, 1, 1, 1, 0, 2)), InputError);
  try {
    generate(registry, "zb-h3", one_chunk);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown schedule 'zb-h3'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("zb-h1"), std::string::npos);  // lists the known names
  }
}

TEST(Generators, DeterministicOutput) {
  const auto registry = GeneratorRegistry::with_builtins();
  const Problem problem = testing::uniform_problem(6, 13, 1, 2, 1);
  EXPECT_EQ(to_text(generate(registry, "zb-h2", problem)), to_text(generate(registry, "zb-h2", problem)));
}

}  // namespace
}  // namespace zb
