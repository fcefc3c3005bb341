// PyTorch pipeline CSV: the two real files from PyTorch's scheduler, and round trips of ours.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/schedule/atomic_file.h"
#include "sim/schedule/error.h"
#include "sim/schedule/evaluator.h"
#include "sim/schedule/generator_registry.h"
#include "sim/schedule/pytorch_csv.h"
#include "tests/support/problems.h"
#include "sim/schedule/validator.h"

namespace zb {
namespace {

// Copies of ../shared/fixtures/pytorch, written by PyTorch's own scheduler.
std::string fixture(const std::string& name) { return read_file(testing::source_path("tests/data/pytorch/" + name)); }

Problem problem_for(const ImportedSchedule& imported) { return testing::imported_spec(imported).build(); }

TEST(PytorchCsv, ReadsTheOlderZb1pFile) {
  const ImportedSchedule imported = parse_pytorch_csv(fixture("zb1p_2rank_2stagep_compute.csv"), "zb1p.csv");
  EXPECT_EQ(imported.devices, 2);
  EXPECT_EQ(imported.chunks, 2);
  EXPECT_EQ(imported.microbatches, 8);
  EXPECT_EQ(imported.placement, Placement::interleaved);
  // Rank 0 starts 0F0, 0F1, 2F0: stage 2 is rank 0's chunk 1. Its B is the input gradient (a W follows).
  const auto& d0 = imported.schedule.devices[0];
  EXPECT_EQ(d0[2], (Action{Pass::F, 0, 1}));
  EXPECT_EQ(d0[4], (Action{Pass::B, 0, 1}));
  EXPECT_EQ(d0[5], (Action{Pass::W, 0, 1}));
  const Problem problem = problem_for(imported);
  EXPECT_TRUE(check_schedule(problem, imported.schedule).ok()) << check_schedule(problem, imported.schedule).message();
  EXPECT_GT(evaluate(problem, imported.schedule).metrics.span, 0);
}

TEST(PytorchCsv, ReadsTheNewerDualPipeVFileWithOverlaps) {
  const ImportedSchedule imported = parse_pytorch_csv(fixture("dualpipev_4rank_10mb.csv"), "dualpipev.csv");
  EXPECT_EQ(imported.devices, 4);
  EXPECT_EQ(imported.chunks, 2);
  EXPECT_EQ(imported.microbatches, 10);
  EXPECT_EQ(imported.placement, Placement::vshape);
  const auto& d0 = imported.schedule.devices[0];
  // "7I0" is the input gradient of stage 7 = rank 0's chunk 1; "7B3" a full backward.
  EXPECT_NE(std::find(d0.begin(), d0.end(), Action{Pass::B, 0, 1}), d0.end());
  EXPECT_NE(std::find(d0.begin(), d0.end(), Action{Pass::BW, 3, 1}), d0.end());
  // "(0F7;7B3)OVERLAP_F_B" became F7 overlapped with the next action, BW3.1.
  const auto f7 = std::find(d0.begin(), d0.end(), Action{Pass::F, 7, 0, true});
  ASSERT_NE(f7, d0.end());
  EXPECT_EQ(*(f7 + 1), (Action{Pass::BW, 3, 1}));
  // Rank r: 2(m - 2p + r + 1) steady-state pairs and p - r - 1 in the drain = 9, 10, 11, and 11 on
  // rank 3, whose first F4 and B0 run one after the other.
  int pairs = 0;
  for (const auto& list : imported.schedule.devices) {
    pairs += static_cast<int>(std::count_if(list.begin(), list.end(), [](const Action& a) { return a.overlap_next; }));
  }
  EXPECT_EQ(pairs, 41);
  const Problem problem = problem_for(imported);
  const ValidationReport report = check_schedule(problem, imported.schedule);
  EXPECT_TRUE(report.ok()) << report.message();
  EXPECT_GT(evaluate(problem, imported.schedule).metrics.span, 0);
}

TEST(PytorchCsv, WritesTheDualPipeVFileBackByteForByte) {
  const std::string text = fixture("dualpipev_4rank_10mb.csv");
  const ImportedSchedule imported = parse_pytorch_csv(text, "dualpipev.csv");
  EXPECT_EQ(to_pytorch_csv(problem_for(imported), imported.schedule), text);
}

TEST(PytorchCsv, DualPipeVGeneratorIsPyTorchsSchedule) {
  const auto registry = GeneratorRegistry::with_builtins();
  const Problem problem = testing::generator_spec(registry.get("dualpipe-v"), testing::uniform_spec(4, 10)).build();
  const Schedule schedule = generate(registry, "dualpipe-v", problem);
  EXPECT_EQ(to_pytorch_csv(problem, schedule), fixture("dualpipev_4rank_10mb.csv"));
  EXPECT_EQ(schedule.devices, parse_pytorch_csv(fixture("dualpipev_4rank_10mb.csv"), "f").schedule.devices);
}

TEST(PytorchCsv, RoundTripsEveryGenerator) {
  const auto registry = GeneratorRegistry::with_builtins();
  for (const auto& name : registry.names()) {
    const Problem problem = testing::generator_spec(registry.get(name), testing::uniform_spec(4, 8)).build();
    const int chunks = problem.chunks;
    const Schedule schedule = generate(registry, name, problem);
    const ImportedSchedule back = parse_pytorch_csv(to_pytorch_csv(problem, schedule), name);
    EXPECT_EQ(back.schedule.devices, schedule.devices) << name;
    EXPECT_EQ(back.chunks, chunks);
    EXPECT_EQ(back.microbatches, 8);
  }
}

TEST(PytorchCsv, BadCellsNameTheLineAndColumn) {
  try {
    parse_pytorch_csv("0F0,0F1\n1F0,1X0\n", "bad.csv");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv:2: column 2"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_pytorch_csv("0F0,F1\n", "bad.csv"), InputError);
  EXPECT_THROW(parse_pytorch_csv("\n\n", "bad.csv"), InputError);
  // Composite cells: exactly two parts and PyTorch's OVERLAP_F_B.
  EXPECT_THROW(parse_pytorch_csv("(0F0;1B0)\n", "bad.csv"), InputError);
  EXPECT_THROW(parse_pytorch_csv("(0F0;1B0;0F1)OVERLAP_F_B\n", "bad.csv"), InputError);
  EXPECT_THROW(parse_pytorch_csv("(0F0)OVERLAP_F_B\n", "bad.csv"), InputError);
}

}  // namespace
}  // namespace zb
