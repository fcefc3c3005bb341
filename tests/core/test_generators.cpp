// Every generator produces a valid schedule over many shapes; the registry checks chunk support.
#include <gtest/gtest.h>

#include <algorithm>

#include <fmt/format.h>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "tests/testing/input_error.h"
#include "tests/testing/problems.h"
#include "sim/core/validator.h"

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
          if (info.placement && v != 2) continue;  // the V and bidirectional placements have two chunks
          const bool interleaved_family = name == "1f1b-i" || name == "1f1b-i-a2a" || name == "zb-i";
          if (interleaved_family && m % std::max(1, m / p) != 0) continue;  // no equal rounds
          if (name == "dualpipe-v" && m < 2 * p) continue;
          if (name == "dualpipe" && (p % 2 != 0 || m % 2 != 0 || m < 2 * p)) continue;
          SCOPED_TRACE(fmt::format("{} p={} m={} v={}", name, p, m, v));
          const Problem problem = testing::generator_spec(info, testing::uniform_spec(p, m, 1, 2, 1, 0.25), v).build();
          const Schedule schedule = generate(registry, name, problem);
          EXPECT_EQ(schedule.name, name);
          const ValidationReport report = check_schedule(problem, schedule);
          EXPECT_TRUE(report.ok()) << report.message();
          // Three actions per (stage, microbatch) when the backward is split (F, B, W), else two;
          // dualpipe-v and dualpipe split only the backwards around their steady state, po-h and
          // po-f add copies where they pay.
          const bool split = name.starts_with("zb-") || name.starts_with("gis") || name.starts_with("po-");
          if (!name.starts_with("dualpipe") && !name.starts_with("po-")) {
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

// PyTorch's flexible rounds: m = 10 on p = 4 runs as 2 rounds of 5 microbatches; m = 9 cannot
// split into 2 equal rounds and is refused with the reason.
TEST(Generators, InterleavedRunsInFlexibleRoundsWhenMIsNotAMultipleOfP) {
  const auto registry = GeneratorRegistry::with_builtins();
  const Problem problem = testing::uniform_problem(4, 10, 1, 1, 1, 0, 2);
  for (const char* name : {"1f1b-i", "zb-i"}) {
    const Schedule schedule = generate(registry, name, problem);
    ASSERT_TRUE(check_schedule(problem, schedule).ok()) << name << check_schedule(problem, schedule).message();
    // Device 0 starts with a whole round of chunk 0, then the same round on chunk 1.
    std::string first;
    for (int k = 0; k < 8; ++k) first += to_token(schedule.devices[0][static_cast<std::size_t>(k)]) + " ";
    EXPECT_EQ(first, "F0 F1 F2 F3 F4 F0.1 F1.1 F2.1 ") << name;
  }
  const std::string error =
      testing::error_of([&] { generate(registry, "1f1b-i", testing::uniform_problem(4, 9, 1, 1, 1, 0, 2)); });
  EXPECT_NE(error.find("m=9 does not split into 2 equal rounds"), std::string::npos) << error;
}

// The interleaved zero-bubble schedule keeps the interleaved order but splits B from W and
// defers W into the waits: less bubble than 1F1B-I at equal costs, and less warm-up memory.
TEST(Generators, InterleavedZeroBubbleBeatsInterleaved1F1B) {
  const auto registry = GeneratorRegistry::with_builtins();
  const Problem problem = testing::uniform_problem(4, 8, 1, 1, 1, 0, 2);
  const Trace plain = evaluate(problem, generate(registry, "1f1b-i", problem));
  const Trace zb = evaluate(problem, generate(registry, "zb-i", problem));
  EXPECT_LT(zb.metrics.span, plain.metrics.span);
  EXPECT_LE(zb.metrics.peak_memory[0], plain.metrics.peak_memory[0]);
  // Device r defers r Ws: device 0 runs each W right after its B.
  const Schedule schedule = generate(registry, "zb-i", problem);
  const auto& first = schedule.devices[0];
  for (std::size_t i = 0; i + 1 < first.size(); ++i) {
    if (first[i].pass == Pass::B) {
      EXPECT_EQ(first[i + 1].pass, Pass::W) << i;
    }
  }
}

TEST(Generators, RegistryRefusesWrongChunkCounts) {
  const auto registry = GeneratorRegistry::with_builtins();
  const Problem two_chunks = testing::uniform_problem(4, 8, 1, 1, 1, 0, 2);
  const Problem one_chunk = testing::uniform_problem(4, 8, 1, 1, 1);
  EXPECT_THROW(generate(registry, "zb-h1", two_chunks), InputError);
  EXPECT_THROW(generate(registry, "1f1b-i", one_chunk), InputError);
  EXPECT_THROW(generate(registry, "1f1b-i", testing::uniform_problem(4, 9, 1, 1, 1, 0, 2)), InputError);
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
