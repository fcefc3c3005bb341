// PyTorch pipeline CSV: the two real files from PyTorch's scheduler, and round trips of ours.
#include <gtest/gtest.h>

#include <algorithm>

#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/formats/pytorch_csv.h"
#include "tests/testing/problems.h"
#include "sim/core/validator.h"

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
    if (registry.get(name).placement == Placement::bidirectional) continue;  // refused: BidirectionalIsRefused
    const Problem problem = testing::generator_spec(registry.get(name), testing::uniform_spec(4, 8)).build();
    const int chunks = problem.chunks;
    const Schedule schedule = generate(registry, name, problem);
    if (has_copies(schedule)) {  // PyTorch has no offload action
      EXPECT_THROW(to_pytorch_csv(problem, schedule), InputError) << name;
      continue;
    }
    const ImportedSchedule back = parse_pytorch_csv(to_pytorch_csv(problem, schedule), name);
    EXPECT_EQ(back.schedule.devices, schedule.devices) << name;
    EXPECT_EQ(back.chunks, chunks);
    EXPECT_EQ(back.microbatches, 8);
  }
}

// compute_comms files: the transfer points, FSDP actions and REDUCE_GRAD of PyTorch's runtime.
std::string without_cr(std::string text) {
  std::erase(text, '\r');
  return text;
}

TEST(PytorchCsv, ReadsACommsFileAsPyTorchsRuntimeWritesIt) {
  const ImportedSchedule comms = parse_pytorch_csv(fixture("dualpipev_4rank_10mb_comms.csv"), "comms.csv");
  const ImportedSchedule compute = parse_pytorch_csv(fixture("dualpipev_4rank_10mb.csv"), "compute.csv");
  EXPECT_EQ(comms.form, PytorchCsvForm::compute_comms);
  EXPECT_EQ(compute.form, PytorchCsvForm::compute_only);
  EXPECT_EQ(comms.schedule.devices, compute.schedule.devices);
  EXPECT_EQ(comms.placement, Placement::vshape);
  // 10 microbatches cross 6 rank boundaries (8 stages in a V: 0-1, 1-2, 2-3 and 4-5, 5-6, 6-7; the
  // turn 3-4 is on one rank) both ways: 120 messages, each a SEND and a RECV.
  EXPECT_EQ(comms.comms.transfer_points, 240);
  EXPECT_EQ(comms.comms.reduce_grads, 8);  // one per stage
  EXPECT_EQ(comms.comms.unshards, comms.comms.reshards);
  EXPECT_GE(comms.comms.unshards, 8);
  EXPECT_NE(describe_comms(comms).find("240 SEND/RECV transfer points checked"), std::string::npos);
  EXPECT_EQ(describe_comms(compute), "");
}

// The lowering equals PyTorch's, cell for cell, on PyTorch's own DualPipeV schedule and on ours.
TEST(PytorchCsv, WritesCommsAsPyTorchsRuntimeLowersThem) {
  const ImportedSchedule compute = parse_pytorch_csv(fixture("dualpipev_4rank_10mb.csv"), "compute.csv");
  EXPECT_EQ(to_pytorch_csv(problem_for(compute), compute.schedule, PytorchCsvForm::compute_comms),
            without_cr(fixture("dualpipev_4rank_10mb_comms.csv")));
  const auto registry = GeneratorRegistry::with_builtins();
  for (const auto& [name, file] : {std::pair{"zb-v-h", "zbvh_4rank_8mb_comms.csv"}, {"1f1b-i", "1f1bi_4rank_8mb_comms.csv"}}) {
    const Problem problem = testing::generator_spec(registry.get(name), testing::uniform_spec(4, 8)).build();
    EXPECT_EQ(to_pytorch_csv(problem, generate(registry, name, problem), PytorchCsvForm::compute_comms),
              without_cr(fixture(file)))
        << name;
  }
}

TEST(PytorchCsv, CommsRoundTripEveryGenerator) {
  const auto registry = GeneratorRegistry::with_builtins();
  for (const auto& name : registry.names()) {
    if (registry.get(name).placement == Placement::bidirectional) continue;  // refused: BidirectionalIsRefused
    const Problem problem = testing::generator_spec(registry.get(name), testing::uniform_spec(4, 8)).build();
    const Schedule schedule = generate(registry, name, problem);
    if (has_copies(schedule)) continue;  // refused: RoundTripsEveryGenerator
    const std::string text = to_pytorch_csv(problem, schedule, PytorchCsvForm::compute_comms);
    const ImportedSchedule back = parse_pytorch_csv(text, name);
    EXPECT_EQ(back.form, PytorchCsvForm::compute_comms) << name;
    EXPECT_EQ(back.schedule.devices, schedule.devices) << name;
    EXPECT_EQ(back.comms.reduce_grads, problem.stages()) << name;
    EXPECT_EQ(to_pytorch_csv(problem_for(back), back.schedule, PytorchCsvForm::compute_comms), text) << name;
  }
}

// Two ranks, one stage each, two microbatches, 1F1B with transfer points as the lowering puts them.
constexpr const char* kTwoRanks =
    "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,0RECV_B1,0B1\n"
    "1RECV_F0,1RECV_F1,1F0,1B0,1SEND_B0,1F1,1B1,1SEND_B1\n";

std::string error_of(const std::string& text) {
  try {
    parse_pytorch_csv(text, "t.csv");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(PytorchCsv, ChecksTransferPoints) {
  EXPECT_EQ(error_of(kTwoRanks), "");
  EXPECT_EQ(parse_pytorch_csv(kTwoRanks, "t.csv").comms.transfer_points, 8);
  // A SEND before the compute that produces its tensor; a RECV after the compute that needs it.
  EXPECT_NE(error_of(replaced(kTwoRanks, "0F0,0SEND_F0", "0SEND_F0,0F0")).find("'0SEND_F0': comes before 0F0"),
            std::string::npos);
  EXPECT_NE(error_of(replaced(kTwoRanks, "0RECV_B0,0B0", "0B0,0RECV_B0")).find("'0RECV_B0': comes after 0I/B0"),
            std::string::npos);
  // A tensor that crosses ranks without its RECV.
  EXPECT_NE(error_of(replaced(kTwoRanks, "1RECV_F1,", "")).find("the forward output of stage 0 mb 1 crosses ranks but has no RECV"),
            std::string::npos);
  // Receives posted in another order than the sends: NCCL would hand mb 1's tensor to mb 0.
  EXPECT_NE(error_of(replaced(kTwoRanks, "1RECV_F0,1RECV_F1", "1RECV_F1,1RECV_F0")).find("rank 0 sends to rank 1 in another order"),
            std::string::npos);
  // A SEND held back behind a backward that waits for it: deadlock.
  EXPECT_NE(error_of(replaced(kTwoRanks, "0F0,0SEND_F0,0F1,0SEND_F1,0RECV_B0,0B0,", "0F0,0F1,0RECV_B0,0B0,0SEND_F0,0SEND_F1,"))
                .find("deadlock"),
            std::string::npos);
  // On the wrong rank, twice, to a stage on the same rank, with or without a microbatch.
  EXPECT_NE(error_of(replaced(kTwoRanks, "1RECV_F0", "0RECV_F0")).find("stage 0 runs on rank 0"), std::string::npos);
  EXPECT_NE(error_of(replaced(kTwoRanks, "0SEND_F1", "0SEND_F0")).find("appears twice"), std::string::npos);
  EXPECT_NE(error_of(replaced(kTwoRanks, "1RECV_F0", "1RECV_F5")).find("microbatch 5 does not exist"), std::string::npos);
  EXPECT_NE(error_of(replaced(kTwoRanks, "1F1,", "1UNSHARD3,1F1,")).find("UNSHARD takes no microbatch"), std::string::npos);
  EXPECT_NE(error_of(replaced(kTwoRanks, "0B1", "0B1,0SEND_B1")).find("there is no stage on the other side"),
            std::string::npos);
  EXPECT_NE(error_of(replaced(kTwoRanks, "0F0", "0FOO0")).find("has op 'FOO'"), std::string::npos);
  // UNSHARD, RESHARD and REDUCE_GRAD are accepted and counted.
  const ImportedSchedule fsdp = parse_pytorch_csv(replaced(replaced(kTwoRanks, "0F0,", "0UNSHARD,0F0,"), "0B1", "0B1,0REDUCE_GRAD,0RESHARD"), "t.csv");
  EXPECT_EQ(fsdp.comms.unshards, 1);
  EXPECT_EQ(fsdp.comms.reshards, 1);
  EXPECT_EQ(fsdp.comms.reduce_grads, 1);
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
