// Overlapped F&B pairs (Action::overlap_next): text and JSON forms, the validator's rule, the
// block's timing (pass_time.h) with overlap and all-to-all, memory, traces and drawings.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/pass_time.h"
#include "sim/core/problem_fields.h"
#include "sim/core/schedule.h"
#include "sim/formats/trace_json.h"
#include "sim/formats/trace_writers.h"
#include "sim/core/validator.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

// One device holding both stages of a V (p = 1), per chunk t_f 1, t_b 2, t_w 1 (t_bw 3); the
// all-to-all takes no SMs unless `sm_share` says so.
Problem one_device(double overlap, double a2a_per_chunk = 0, double sm_share = 0, double a2a_overlap = 1) {
  ProblemSpec spec = testing::uniform_spec(1, 2, 2, 4, 2, 0, 2);
  spec.placement = Placement::vshape;
  spec.overlap = overlap;
  spec.comm_sm_share = sm_share;
  spec.a2a_overlap = a2a_overlap;
  if (a2a_per_chunk > 0) spec.t_a2a = {2 * a2a_per_chunk};
  return spec.build();
}

// F1 runs overlapped with BW0.1 (the last stage's backward of microbatch 0).
const char* kPairText = "d0: F0 F0.1 (F1;BW0.1) F1.1 BW0 BW1.1 BW1\n";

TEST(OverlapText, PairsReadAndWriteInTextAndJson) {
  const Schedule schedule = parse_schedule_text(kPairText, "t");
  ASSERT_EQ(schedule.devices[0].size(), 8u);
  EXPECT_EQ(schedule.devices[0][2], (Action{Pass::F, 1, 0, true}));
  EXPECT_EQ(schedule.devices[0][3], (Action{Pass::BW, 0, 1, false}));
  EXPECT_EQ(to_text(schedule), kPairText);
  const nlohmann::json json = to_json(schedule);
  EXPECT_EQ(json["devices"][0][2], "(F1;BW0.1)");
  EXPECT_EQ(schedule_from_json(nlohmann::json::parse(json.dump()), "j").devices, schedule.devices);
  for (const char* bad : {"d0: (F1)", "d0: (F1;BW0;B2)", "d0: (F1;BW0", "d0: (F1;X0)"}) {
    EXPECT_THROW(parse_schedule_text(bad, "t"), InputError) << bad;
  }
}

TEST(OverlapRule, OnlyAForwardThenABackwardThatDoesNotNeedIt) {
  const Problem problem = one_device(0);
  EXPECT_TRUE(check_schedule(problem, parse_schedule_text(kPairText, "t")).ok());
  auto error_of = [&](const char* text) { return check_schedule(problem, parse_schedule_text(text, "t")).message(); };
  EXPECT_NE(error_of("d0: F0 F0.1 (BW0.1;F1) F1.1 BW0 BW1.1 BW1").find("expected a forward then a backward"),
            std::string::npos);
  // The last stage's backward needs its own forward: that pair could never start.
  EXPECT_NE(error_of("d0: F0 (F0.1;BW0.1) F1 F1.1 BW0 BW1.1 BW1").find("needs the forward it is paired with"),
            std::string::npos);
  Schedule dangling = parse_schedule_text("d0: F0 F0.1 F1 F1.1 BW0.1 BW0 BW1.1 BW1", "t");
  dangling.devices[0].back().overlap_next = true;
  EXPECT_NE(check_schedule(problem, dangling).message().find("it is the device's last"), std::string::npos);
  Schedule chained = parse_schedule_text(kPairText, "t");
  chained.devices[0][3].overlap_next = true;
  EXPECT_NE(check_schedule(problem, chained).message().find("chained"), std::string::npos);
}

TEST(OverlapTiming, BlockTimeFollowsOverlapAndAllToAll) {
  // c1 = t_f = 1, c2 = t_bw = 3: 1 + 3 - overlap * 1.
  EXPECT_DOUBLE_EQ(overlapped_times(one_device(0), Pass::F, 0, Pass::BW, 1).total(), 4.0);
  EXPECT_DOUBLE_EQ(overlapped_times(one_device(0.5), Pass::F, 0, Pass::BW, 1).total(), 3.5);
  EXPECT_DOUBLE_EQ(overlapped_times(one_device(1), Pass::F, 0, Pass::BW, 1).total(), 3.0);
  // Shares in proportion to the parts alone (1 : 3).
  EXPECT_DOUBLE_EQ(overlapped_times(one_device(0.5), Pass::F, 0, Pass::BW, 1).first, 0.875);
  // All-to-all 0.5: exposed alone (F 1.5, BW 3.5, W none), hidden in the pair.
  const Problem a2a = one_device(0.5, 0.5);
  EXPECT_DOUBLE_EQ(pass_time(a2a, Pass::F, 0), 1.5);
  EXPECT_DOUBLE_EQ(pass_time(a2a, Pass::BW, 0), 3.5);
  EXPECT_DOUBLE_EQ(pass_time(a2a, Pass::W, 0), 1.0);
  EXPECT_DOUBLE_EQ(overlapped_times(a2a, Pass::F, 0, Pass::BW, 1).total(), 3.5);
  // All-to-all 2: BW's exceeds F's compute (1) by 1; F's hides under BW's 3.
  EXPECT_DOUBLE_EQ(overlapped_times(one_device(1, 2), Pass::F, 0, Pass::BW, 1).total(), 4.0);
}

// The hidden all-to-all takes SMs from the partner's compute (DeepSeek-V3: 20 of 132), and
// a2a_overlap says how much of it a pair may hide at all.
TEST(OverlapTiming, HidingCostsTheSharedSmsAndCanBeTurnedOff) {
  // F (c 1, a2a 0.5) with BW (c 3, a2a 0.5), overlap 0, share 0.25: F's all-to-all ends within
  // BW's slowed compute (0.5 x 0.75 <= 3): 0.25 x 0.5; BW's within F's (0.375 <= 1): the same.
  EXPECT_DOUBLE_EQ(overlapped_times(one_device(0, 0.5, 0.25), Pass::F, 0, Pass::BW, 1).total(), 4.0 + 0.25);
  // BW's all-to-all of 2 outlasts F's compute slowed to 1 / 0.75: it costs 2 - 1 = 1.
  EXPECT_DOUBLE_EQ(overlapped_times(one_device(0, 2, 0.25), Pass::F, 0, Pass::BW, 1).total(), 4.0 + 0.5 + 1.0);
  // At the boundary (a2a 4/3 against c 1) both forms agree: 0.25 x 4/3 = 4/3 - 1.
  EXPECT_NEAR(overlapped_times(one_device(0, 4.0 / 3, 0.25), Pass::F, 0, Pass::BW, 1).total(),
              4.0 + 0.25 * 4.0 / 3 + 1.0 / 3, 1e-12);
  // Nothing hidden: the pair takes its parts alone, all-to-all included.
  const Problem off = one_device(0, 0.5, 0.25, 0);
  EXPECT_DOUBLE_EQ(overlapped_times(off, Pass::F, 0, Pass::BW, 1).total(),
                   pass_time(off, Pass::F, 0) + pass_time(off, Pass::BW, 1));
  // Half hidden: 0.25 of each exposed, the hidden 0.25 costs 0.25 x 0.25.
  EXPECT_DOUBLE_EQ(overlapped_times(one_device(0, 0.5, 0.25, 0.5), Pass::F, 0, Pass::BW, 1).total(),
                   4.0 + 2 * (0.25 + 0.0625));
  // The default is DeepSeek's share; a share of 1 would stop the compute.
  EXPECT_DOUBLE_EQ(ProblemSpec{}.comm_sm_share, 20.0 / 132.0);
  ProblemSpec bad = testing::uniform_spec(1, 2, 2, 4, 2, 0, 2);
  bad.comm_sm_share = 1;
  EXPECT_THROW(bad.build(), InputError);
  bad.comm_sm_share = 0;
  bad.a2a_overlap = 1.5;
  EXPECT_THROW(bad.build(), InputError);
}

// Planners see each pass alone: the all-to-all folded into F, B and BW.
TEST(OverlapTiming, PlannersSeeThePassesAlone) {
  const Problem a2a = one_device(0, 0.5);
  const Problem planned = with_all_to_all_in_compute(a2a);
  EXPECT_TRUE(planned.t_a2a.empty());
  for (const Pass pass : {Pass::F, Pass::B, Pass::W, Pass::BW}) {
    for (int stage = 0; stage < 2; ++stage) EXPECT_DOUBLE_EQ(pass_time(planned, pass, stage), pass_time(a2a, pass, stage));
  }
}

TEST(OverlapTiming, EvaluatorRunsThePairAsOneBlock) {
  const Schedule schedule = parse_schedule_text(kPairText, "t");
  // F0 [0,1], F0.1 [1,2], the pair [2,5.5] (F1 drawn [2,2.875]), F1.1 [5.5,6.5], then three BW of 3.
  const Trace trace = evaluate(one_device(0.5), schedule);
  EXPECT_DOUBLE_EQ(trace.metrics.makespan, 15.5);
  EXPECT_DOUBLE_EQ(trace.metrics.busy[0], 15.5);
  ASSERT_GE(trace.spans.size(), 4u);
  EXPECT_DOUBLE_EQ(trace.spans[2].start, 2.0);
  EXPECT_DOUBLE_EQ(trace.spans[2].end, 2.875);
  EXPECT_TRUE(trace.spans[2].overlap_next);
  EXPECT_DOUBLE_EQ(trace.spans[3].start, 2.875);
  EXPECT_DOUBLE_EQ(trace.spans[3].end, 5.5);
  EXPECT_FALSE(trace.spans[3].overlap_next);
  // F1.1 needs F1's output: it is there when the block ends, not when F1's share does.
  EXPECT_DOUBLE_EQ(trace.spans[4].start, 5.5);
  EXPECT_DOUBLE_EQ(evaluate(one_device(0), schedule).metrics.makespan, 16.0);
  // With all-to-all 0.5 per pass: 1.5 + 1.5 + 3.5 (hidden) + 1.5 + 3 x 3.5.
  EXPECT_DOUBLE_EQ(evaluate(one_device(0.5, 0.5), schedule).metrics.makespan, 18.5);
  // Memory (per chunk: F +0.5, B and W -0.25): F1 allocates at the block's start, BW0.1 frees at its end.
  EXPECT_DOUBLE_EQ(trace.metrics.peak_memory[0], 1.5);
  EXPECT_DOUBLE_EQ(peak_memory_by_order(one_device(0.5), schedule)[0], 1.5);
}

// What the overlap saves is not a negative bubble: the denominator's work drops by it. One device
// doing no wait: work 16 at overlap 0, 16 - 0.5 * min(1, 3) = 15.5 at overlap 0.5, bubble 0 both
// times; exposed all-to-all is idle, so it is bubble.
TEST(OverlapTiming, TheBubbleCountsNeitherTheSavingNorHidesTheAllToAll) {
  const Schedule schedule = parse_schedule_text(kPairText, "t");
  const Trace plain = evaluate(one_device(0), schedule);
  EXPECT_DOUBLE_EQ(plain.metrics.work, 16.0);
  EXPECT_DOUBLE_EQ(plain.metrics.bubble_rate, 0.0);
  const Trace half = evaluate(one_device(0.5), schedule);
  EXPECT_DOUBLE_EQ(half.metrics.work, 15.5);
  EXPECT_DOUBLE_EQ(half.metrics.bubble_rate, 0.0);
  const Trace a2a = evaluate(one_device(0.5, 0.5), schedule);
  EXPECT_DOUBLE_EQ(a2a.metrics.work, 15.5);
  EXPECT_NEAR(a2a.metrics.bubble_rate, 3.0 / 18.5, 1e-12);  // 6 passes alone expose 0.5 each
}

TEST(OverlapTiming, APairWaitsForBothInputs) {
  // Two devices, one chunk each: d1's pair (F1;BW0) needs F1 from d0 at 2 and its own F0 (last stage).
  ProblemSpec spec = testing::uniform_spec(2, 2, 1, 1, 1);
  spec.overlap = 1;
  const Problem problem = spec.build();
  const Schedule schedule = parse_schedule_text("d0: F0 F1 BW0 BW1\nd1: F0 (F1;BW0) BW1\n", "t");
  ASSERT_TRUE(check_schedule(problem, schedule).ok()) << check_schedule(problem, schedule).message();
  const Trace trace = evaluate(problem, schedule);
  // d1: F0 [1,2]; the pair waits for F1 (d0 ends it at 2) and runs 1 + 2 - 1 = 2: [2,4]; BW1 [4,6].
  EXPECT_DOUBLE_EQ(trace.spans[4].start, 1.0);
  EXPECT_DOUBLE_EQ(trace.spans[5].start, 2.0);
  EXPECT_DOUBLE_EQ(trace.spans[6].end, 4.0);
  // d0's BW0 needs d1's BW0 output: the block's end, 4.
  EXPECT_DOUBLE_EQ(trace.spans[2].start, 4.0);
  EXPECT_DOUBLE_EQ(trace.metrics.makespan, 8.0);
}

TEST(OverlapFields, OverlapAndAllToAllAreProblemFields) {
  ProblemSpec spec = testing::uniform_spec(2, 4);
  find_problem_field("overlap")->set_from_text(spec, "0.25", "--overlap");
  find_problem_field("t_a2a")->set_from_text(spec, "0.5", "--t-a2a");
  const Problem problem = spec.build();
  EXPECT_DOUBLE_EQ(problem.overlap, 0.25);
  EXPECT_EQ(problem.t_a2a, (std::vector<double>{0.5, 0.5}));
  const nlohmann::json json = to_json(spec);
  EXPECT_EQ(json["overlap"], 0.25);
  EXPECT_EQ(json["t_a2a"], 0.5);
  EXPECT_FALSE(to_json(testing::uniform_spec(2, 4)).contains("overlap"));
  EXPECT_FALSE(to_json(testing::uniform_spec(2, 4)).contains("t_a2a"));
  for (double bad : {-0.1, 1.5}) {
    spec.overlap = bad;
    try {
      spec.build("s.json");
      FAIL() << bad;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("field 'overlap'"), std::string::npos) << e.what();
    }
  }
  spec.overlap = 0;
  spec.t_a2a = {-1};
  EXPECT_THROW(spec.build(), InputError);
}

TEST(OverlapDrawing, TracesKeepThePairAndDrawOneBox) {
  const Trace trace = evaluate(one_device(0.5), parse_schedule_text(kPairText, "t"));
  const Trace back = trace_from_json(nlohmann::json::parse(to_json(trace).dump()), "trace");
  ASSERT_EQ(back.spans.size(), trace.spans.size());
  EXPECT_TRUE(back.spans[2].overlap_next);
  EXPECT_FALSE(back.spans[3].overlap_next);
  const std::string svg = to_svg({{"pair", &trace}});
  EXPECT_NE(svg.find("<title>(F1;BW0.1) overlapped: 2-5.5</title>"), std::string::npos);
  const std::string chrome = to_chrome_trace({{"pair", &trace}});
  EXPECT_NE(chrome.find(R"j("name":"(F1;BW0.1)","cat":"overlap")j"), std::string::npos);
}

}  // namespace
}  // namespace zb
