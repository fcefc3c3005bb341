// DualPipe (bidirectional placement, two model copies): the path model, the generator and the
// checks of ../shared/V-SCHEDULES.md ("DualPipe and DualPipeV").
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/generators/generators.h"
#include "sim/formats/pytorch_csv.h"
#include "sim/core/schedule.h"
#include "sim/core/validator.h"
#include "tests/testing/input_error.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

// Per-device costs as given (under bidirectional each stage is a whole slice: not split).
ProblemSpec bidirectional_spec(int p, int m, double tf = 1, double tb = 1, double tw = 1) {
  ProblemSpec spec = testing::uniform_spec(p, m, tf, tb, tw, 0, 2);
  spec.placement = Placement::bidirectional;
  return spec;
}

Problem bidirectional_problem(int p, int m, double tf = 1, double tb = 1, double tw = 1) {
  return bidirectional_spec(p, m, tf, tb, tw).build();
}

TEST(Bidirectional, PathsCopiesAndCosts) {
  const Problem problem = bidirectional_problem(4, 8, 2, 3, 1);
  // The first m/2 microbatches run the down copy, the others the up copy.
  EXPECT_EQ(problem.path(3).first, 0);
  EXPECT_EQ(problem.path(3).last, 3);
  EXPECT_EQ(problem.path(4).first, 4);
  EXPECT_EQ(problem.path(4).last, 7);
  // Stage d of the down copy and stage p-1-d of the up copy (stage 2p-1-d) share device d.
  EXPECT_EQ(problem.stage_of(0, 1), 7);
  EXPECT_EQ(problem.device_of_stage(4), 3);
  EXPECT_FALSE(problem.crosses(3));  // no microbatch goes from one copy to the other
  EXPECT_TRUE(problem.crosses(4));
  EXPECT_EQ(problem.parameter_copies(), 2);
  // Each stage is a whole slice: per-device costs are not split, so the work is 1F1B's.
  EXPECT_DOUBLE_EQ(problem.t_f[5], 2.0);
  EXPECT_DOUBLE_EQ(problem.work(), 8 * (2.0 + 3.0 + 1.0));
  EXPECT_DOUBLE_EQ(problem.work(), testing::uniform_problem(4, 8, 2, 3, 1).work());
  EXPECT_DOUBLE_EQ(problem.activation_unit(), 1.0);  // one microbatch leaves one slice's M_B
  EXPECT_EQ(testing::uniform_problem(4, 8, 1, 1, 1).parameter_copies(), 1);
}

TEST(DualPipe, ValidAtUnitCostsForSeveralShapes) {
  for (int p : {2, 4, 6, 8}) {
    for (int m : {2 * p, 2 * p + 2, 4 * p}) {
      const Problem problem = bidirectional_problem(p, m);
      const Schedule schedule = make_dualpipe(problem);
      const ValidationReport report = check_schedule(problem, schedule);
      ASSERT_TRUE(report.ok()) << "p=" << p << " m=" << m << "\n" << report.message();
      EXPECT_EQ(make_dualpipe(problem).devices, schedule.devices);
      const Trace trace = evaluate(problem, schedule);
      EXPECT_DOUBLE_EQ(trace.metrics.work, 3.0 * m) << "p=" << p << " m=" << m;
      // Device r and its mirror p-1-r run the same program with the copies swapped.
      for (int r = 0; r < p; ++r) {
        const auto& mine = schedule.devices[static_cast<std::size_t>(r)];
        const auto& mirror = schedule.devices[static_cast<std::size_t>(p - 1 - r)];
        ASSERT_EQ(mine.size(), mirror.size());
        for (std::size_t i = 0; i < mine.size(); ++i) {
          EXPECT_EQ(mine[i].pass, mirror[i].pass);
          EXPECT_EQ(mine[i].chunk, 1 - mirror[i].chunk);
          EXPECT_EQ(mine[i].microbatch, (mirror[i].microbatch + m / 2) % m);
        }
      }
      // Pairs are a forward of one copy with a full backward of the other.
      for (const auto& list : schedule.devices) {
        for (std::size_t i = 0; i + 1 < list.size(); ++i) {
          if (!list[i].overlap_next) continue;
          EXPECT_EQ(list[i].pass, Pass::F);
          EXPECT_EQ(list[i + 1].pass, Pass::BW);
          EXPECT_NE(list[i].chunk, list[i + 1].chunk);
        }
      }
      // V-SCHEDULES.md: DualPipe holds PP+1 activations (M_B, one slice's forward each).
      for (double peak : trace.metrics.peak_memory) EXPECT_LE(peak, p + 1.0) << "p=" << p << " m=" << m;
      EXPECT_DOUBLE_EQ(trace.metrics.peak_memory[0], p + 1.0) << "p=" << p << " m=" << m;
    }
  }
}

// p=4, m=8, per-device unit costs (each stage t_f = t_b = t_w = 1, BW 2), t_comm 0, overlap 0: a
// pair (F;BW) takes 3 and starts when both its inputs are there. Down microbatches 0..3 run
// d0 -> d3, up microbatches 4..7 (chunk 1) run d3 -> d0. Lists (make_dualpipe):
//   d0: F0 F1 F2 F4.1 B4.1 W4.1 F5.1 (F3;BW5.1) (F6.1;BW0) BW6.1 (F7.1;BW1) BW7.1 B2 W2 B3 W3
//   d1: F0 F4.1 F1 F5.1 F2 BW4.1 (F6.1;BW0) (F3;BW5.1) (F7.1;BW1) BW6.1 BW2 B7.1 B3 W7.1 W3
//   d2 and d3: d1 and d0 with the copies swapped.
// By hand (start of each action): d0 runs F0 F1 F2 at 0 1 2, waits for d1's F4.1 (ends 3): F4.1
// at 3, B4.1 4, W4.1 5, F5.1 at 6 (d1's ends 5), the pair (F3;BW5.1) 7-10; d3 mirrors it. d1: F0
// 1, F4.1 2, F1 3, F5.1 4, F2 5, BW4.1 6-8 (d0's B4.1 ended 5); (F6.1;BW0) waits for d2's BW0
// (6-8): 8-11; d2 mirrors d1. Then d0's (F6.1;BW0) needs d1's pair: 11-14, d1's (F3;BW5.1)
// 11-14, d1's (F7.1;BW1) needs d2's pair (F7.1;BW1) 11-14: 14-17; d0: BW6.1 14-16, (F7.1;BW1)
// 17-20, BW7.1 20-22; d1: BW6.1 17-19, BW2 19-21 (d2's BW2 17-19, after d3's 14-16), B7.1 22-23
// (after d0's BW7.1), B3 23-24 (d2's B3 22-23 after d3's BW3 20-22), W7.1 24, W3 25-26; d0: B2
// 22, W2 23, B3 24 (after d1's), W3 25-26. Every device ends at 26 with 24 of work: idle 2 each,
// span 26 on d0 and d3 (from 0), 25 on d1 and d2 (from 1); bubble (26 - 24) / 26 = 1/13.
// Past 2^20 (stage, microbatch) cells the validator first checks the schedule is long enough for
// them; a DualPipe microbatch crosses only its copy's p stages, half of the 2p cells it counted
// (p=514, m=1028 was refused as "needs at least 2113568" actions).
TEST(DualPipe, ValidAboveAMillionCells) {
  const Problem problem = bidirectional_problem(514, 1028);
  ASSERT_GT(static_cast<long>(problem.stages()) * problem.microbatches, 1L << 20);
  const ValidationReport report = check_schedule(problem, make_dualpipe(problem));
  EXPECT_TRUE(report.ok()) << report.message();
}

TEST(DualPipe, HandDerivedTimesAtP4M8) {
  const Problem problem = bidirectional_problem(4, 8);
  const Schedule schedule = make_dualpipe(problem);
  EXPECT_EQ(to_text(schedule),
            "d0: F0 F1 F2 F4.1 B4.1 W4.1 F5.1 (F3;BW5.1) (F6.1;BW0) BW6.1 (F7.1;BW1) BW7.1 B2 W2 B3 W3\n"
            "d1: F0 F4.1 F1 F5.1 F2 BW4.1 (F6.1;BW0) (F3;BW5.1) (F7.1;BW1) BW6.1 BW2 B7.1 B3 W7.1 W3\n"
            "d2: F4.1 F0 F5.1 F1 F6.1 BW0 (F2;BW4.1) (F7.1;BW1) (F3;BW5.1) BW2 BW6.1 B3 B7.1 W3 W7.1\n"
            "d3: F4.1 F5.1 F6.1 F0 B0 W0 F1 (F7.1;BW1) (F2;BW4.1) BW2 (F3;BW5.1) BW3 B6.1 W6.1 B7.1 W7.1\n");
  const Trace trace = evaluate(problem, schedule);
  EXPECT_DOUBLE_EQ(trace.metrics.makespan, 26.0);
  EXPECT_DOUBLE_EQ(trace.metrics.span, 26.0);
  EXPECT_DOUBLE_EQ(trace.metrics.work, 24.0);
  EXPECT_DOUBLE_EQ(trace.metrics.bubble_rate, 1.0 / 13.0);
  for (double idle : trace.metrics.idle) EXPECT_DOUBLE_EQ(idle, 2.0);
  EXPECT_EQ(trace.metrics.device_span, (std::vector<double>{26, 25, 25, 26}));
  EXPECT_EQ(trace.metrics.peak_memory, (std::vector<double>{5, 5, 5, 5}));  // PP + 1
}

TEST(DualPipe, RefusesShapesItCannotBuildWithTheReason) {
  EXPECT_NE(testing::error_of([] { make_dualpipe(bidirectional_problem(3, 12)); }).find("even p"), std::string::npos);
  EXPECT_NE(testing::error_of([] { make_dualpipe(bidirectional_problem(4, 9)); }).find("even m >= 2p = 8"),
            std::string::npos);
  EXPECT_NE(testing::error_of([] { make_dualpipe(bidirectional_problem(4, 6)); }).find("got m=6"), std::string::npos);
  EXPECT_THROW(make_dualpipe(testing::v_problem(4, 8, 1, 1, 1)), InputError);  // the V: one copy
  // Generators not made for two copies refuse the placement rather than build a wrong schedule.
  const auto registry = GeneratorRegistry::with_builtins();
  EXPECT_NE(testing::error_of([&] { generate(registry, "zb-v-h", bidirectional_problem(4, 8)); })
                .find("run by dualpipe only"),
            std::string::npos);
}

TEST(Bidirectional, ValidatorRefusesAnActionOffItsMicrobatchsPath) {
  const Problem problem = bidirectional_problem(2, 4);
  Schedule schedule = make_dualpipe(problem);
  ASSERT_TRUE(check_schedule(problem, schedule).ok());
  // d0's first action F0 (down copy) moved to the up copy: F0.1 is stage 3, which microbatch 0 never runs.
  schedule.devices[0][0].chunk = 1;
  const std::string message = check_schedule(problem, schedule).message();
  EXPECT_NE(message.find("F0.1 is on stage 3, but microbatch 0 runs stages 0..1 (placement bidirectional)"),
            std::string::npos)
      << message;
  EXPECT_THROW(evaluate(problem, schedule), ScheduleError);
}

TEST(Bidirectional, TextAndJsonRoundTripWithThePlacement) {
  const auto registry = GeneratorRegistry::with_builtins();
  const Problem problem = testing::generator_spec(registry.get("dualpipe"), testing::uniform_spec(4, 8)).build();
  EXPECT_EQ(problem.placement, Placement::bidirectional);
  const Schedule schedule = generate(registry, "dualpipe", problem);
  const Schedule text_back = parse_schedule_text(to_text(schedule), "text");
  EXPECT_EQ(text_back.devices, schedule.devices);
  EXPECT_EQ(text_back.placement, Placement::bidirectional);
  EXPECT_EQ(text_back.chunks, 2);
  const Schedule json_back = schedule_from_json(nlohmann::json::parse(to_json(schedule).dump()), "json");
  EXPECT_EQ(json_back.devices, schedule.devices);
  EXPECT_EQ(json_back.placement, Placement::bidirectional);
  EXPECT_TRUE(check_schedule(problem, json_back).ok());
  // Under another placement the same lists are another (invalid) schedule, and the header says so.
  EXPECT_FALSE(check_schedule(testing::v_problem(4, 8, 1, 1, 1), text_back).ok());
}

TEST(Bidirectional, PytorchCsvIsRefusedWithTheReason) {
  const Problem problem = bidirectional_problem(4, 8);
  const std::string error = testing::error_of([&] { to_pytorch_csv(problem, make_dualpipe(problem)); });
  EXPECT_NE(error.find("PyTorch pipeline CSV cannot express placement bidirectional"), std::string::npos) << error;
}

}  // namespace
}  // namespace zb
