// Activation offload (Pass::O, Pass::L): tokens, the validator's rules, the evaluator's copy
// engines and time-ordered memory, the offload pass, and PipeOffload's group-interleaved family.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/generators/generators.h"
#include "sim/core/offload_pass.h"
#include "sim/core/schedule.h"
#include "sim/core/validator.h"
#include "sim/support/error.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

using testing::uniform_problem;
using testing::uniform_spec;

Problem one_device(int m, double t_offload) {
  ProblemSpec spec = uniform_spec(1, m, 1, 1, 1);
  spec.t_offload = {t_offload};
  return spec.build();
}

double peak(const Trace& trace) {
  return *std::max_element(trace.metrics.peak_memory.begin(), trace.metrics.peak_memory.end());
}

const Span& span_of(const Trace& trace, Pass pass, int microbatch) {
  return *std::find_if(trace.spans.begin(), trace.spans.end(),
                       [&](const Span& s) { return s.pass == pass && s.microbatch == microbatch; });
}

TEST(OffloadTokens, ReadAndWriteAsOAndL) {
  const Schedule schedule = parse_schedule_text("d0: F0 O0 F1 L0.1 B1 W1\n", "test");
  ASSERT_EQ(schedule.devices[0].size(), 6u);
  EXPECT_EQ(schedule.devices[0][1], (Action{Pass::O, 0, 0}));
  EXPECT_EQ(schedule.devices[0][3], (Action{Pass::L, 0, 1}));
  EXPECT_EQ(to_text(schedule).find("d0: F0 O0 F1 L0.1 B1 W1") != std::string::npos, true);
  EXPECT_TRUE(has_copies(schedule));
  EXPECT_THROW(parse_schedule_text("d0: X0\n", "test"), InputError);
}

// F0 O0 F1 O1 F2 L1 B2 W2 L0 B1 W1 B0 W0 with unit passes and copies of 0.5: the offloads free
// activations while later forwards run, so the peak is 2 M_B instead of 3, and nothing waits.
TEST(OffloadEvaluator, CopiesOverlapComputeAndLowerThePeak) {
  const Problem problem = one_device(3, 0.5);
  const Schedule schedule = parse_schedule_text("d0: F0 O0 F1 O1 F2 L1 B2 W2 L0 B1 W1 B0 W0\n", "test");
  ASSERT_TRUE(check_schedule(problem, schedule).ok()) << check_schedule(problem, schedule).message();
  const Trace trace = evaluate(problem, schedule);
  EXPECT_DOUBLE_EQ(trace.metrics.makespan, 9.0);
  EXPECT_DOUBLE_EQ(peak(trace), 2.0);
  EXPECT_DOUBLE_EQ(trace.metrics.busy[0], 9.0);  // copies are not compute
  const Span& reload = span_of(trace, Pass::L, 0);
  EXPECT_EQ(reload.stream, Stream::copy);
  EXPECT_DOUBLE_EQ(reload.start, 5.0);  // issued when W2 ends
  EXPECT_DOUBLE_EQ(reload.end, 5.5);
  // The same order without the copies holds all three microbatches at once.
  const Schedule plain = parse_schedule_text("d0: F0 F1 F2 B2 W2 B1 W1 B0 W0\n", "test");
  EXPECT_DOUBLE_EQ(peak(evaluate(problem, plain)), 3.0);
  // The memory timeline is in time order and ends at 0.
  const auto& points = trace.memory[0];
  EXPECT_TRUE(std::is_sorted(points.begin(), points.end(),
                             [](const MemoryPoint& a, const MemoryPoint& b) { return a.time < b.time; }));
  EXPECT_NEAR(points.back().value, 0.0, 1e-12);
  // The validator's peaks are the timed run's, not the list order's (which would free at O).
  EXPECT_DOUBLE_EQ(check_schedule(problem, schedule).peak_memory[0], 2.0);
}

// Copies of 3 with unit passes: each direction's engine runs one copy at a time, and a backward
// waits for its reload.
TEST(OffloadEvaluator, SlowCopiesQueueAndDelayTheBackward) {
  const Problem problem = one_device(3, 3.0);
  const Schedule schedule = parse_schedule_text("d0: F0 O0 F1 O1 F2 L1 B2 W2 L0 B1 W1 B0 W0\n", "test");
  const Trace trace = evaluate(problem, schedule);
  EXPECT_DOUBLE_EQ(span_of(trace, Pass::O, 1).start, 4.0);   // after O0 [1, 4]
  EXPECT_DOUBLE_EQ(span_of(trace, Pass::L, 1).start, 7.0);   // after O1 ends
  EXPECT_DOUBLE_EQ(span_of(trace, Pass::L, 0).start, 10.0);  // after L1 on the same engine
  EXPECT_DOUBLE_EQ(span_of(trace, Pass::B, 1).start, 10.0);  // waits for L1
  EXPECT_DOUBLE_EQ(span_of(trace, Pass::B, 0).start, 13.0);  // waits for L0
  EXPECT_DOUBLE_EQ(trace.metrics.makespan, 15.0);
}

// A step's copies leave the next step's engines where they were: two steps take twice one.
TEST(OffloadEvaluator, StepsRepeat) {
  const Problem problem = one_device(3, 0.5);
  const Schedule schedule = parse_schedule_text("d0: F0 O0 F1 O1 F2 L1 B2 W2 L0 B1 W1 B0 W0\n", "test");
  const Trace trace = evaluate(problem, schedule, {.steps = 2});
  ASSERT_EQ(trace.step_ends.size(), 2u);
  EXPECT_DOUBLE_EQ(trace.step_ends[1], 2 * trace.step_ends[0]);
  EXPECT_DOUBLE_EQ(peak(trace), 2.0);
}

std::string errors_of(const Problem& problem, const std::string& text) {
  return check_schedule(problem, parse_schedule_text(text, "test")).message();
}

TEST(OffloadValidator, NamesEveryBrokenRule) {
  const Problem problem = one_device(2, 0.5);
  const std::pair<const char*, const char*> cases[] = {
      {"d0: F0 O0 F1 B1 W1 B0 W0\n", "O0 is offloaded but never reloaded (no L0)"},
      {"d0: F0 F1 L0 B1 W1 B0 W0\n", "L0 reloads what was never offloaded"},
      {"d0: F0 F1 L0 O0 B1 W1 B0 W0\n", "L0 at step 2 must come after O0 at step 3"},
      {"d0: F0 O0 F1 B1 W1 B0 L0 W0\n", "B0 at step 5 must come after L0 at step 6"},
      {"d0: O0 F0 F1 L0 B1 W1 B0 W0\n", "O0 at step 0 must come after F0 at step 1"},
      {"d0: F0 O0 O0 F1 L0 B1 W1 B0 W0\n", "O0 (stage 0) appears 2 times"},
  };
  for (const auto& [schedule, error] : cases) {
    EXPECT_NE(errors_of(problem, schedule).find(error), std::string::npos) << schedule << errors_of(problem, schedule);
  }
  const Problem no_copy_time = uniform_spec(1, 2, 1, 1, 1).build();
  EXPECT_NE(errors_of(no_copy_time, "d0: F0 O0 F1 L0 B1 W1 B0 W0\n").find("no copy time"), std::string::npos);
  EXPECT_TRUE(check_schedule(problem, parse_schedule_text("d0: F0 O0 F1 L0 B1 W1 B0 W0\n", "test")).ok());
}

TEST(OffloadValidator, JudgesTheLimitOnTheTimedPeak) {
  ProblemSpec spec = uniform_spec(1, 3, 1, 1, 1);
  spec.t_offload = {0.5};
  spec.mem_limit = MemoryLimit{2.0, false};
  const Problem problem = spec.build();
  EXPECT_TRUE(check_schedule(problem, parse_schedule_text("d0: F0 O0 F1 O1 F2 L1 B2 W2 L0 B1 W1 B0 W0\n", "t")).ok());
  // Copies of 1.5: O0 frees at 2.5, after F2 has started at 2 with F0 and F1 still held.
  spec.t_offload = {1.5};
  const ValidationReport slow = check_schedule(spec.build(), parse_schedule_text("d0: F0 O0 F1 O1 F2 L1 B2 W2 L0 B1 W1 B0 W0\n", "t"));
  EXPECT_NE(slow.message().find("over-limit: d0 peaks at 3"), std::string::npos) << slow.message();
}

// Known orders of PipeOffload's construction for p = 4, v = 2, m = 8, device 0 (from the formula
// by hand for the first passes; see gen_group_interleaved.cpp).
TEST(GroupInterleaved, FollowsTheSlotFormula) {
  const Problem problem = uniform_problem(4, 8, 1, 1, 1, 0, 2);
  const auto prefix = [&](int g, std::size_t n) {
    const Schedule schedule = make_group_interleaved(problem, g, "test");
    std::string text;
    for (std::size_t i = 0; i < n; ++i) text += to_token(schedule.devices[0][i]) + " ";
    return text;
  };
  EXPECT_EQ(prefix(2, 19), "F0 F1 F0.1 F1.1 F2 F3 B0.1 W0.1 F2.1 B1.1 W1.1 F3.1 B0 W0 F4 B1 W1 F5 B2.1 ");
  EXPECT_EQ(prefix(1, 17), "F0 F1 F0.1 F2 F1.1 F3 B0.1 W0.1 F2.1 F4 B1.1 W1.1 F3.1 B0 W0 F5 B2.1 ");
}

// Every shape gets a valid order, one pass per slot (the generator throws otherwise); activation
// peaks in chunk units (mem_f = 1/v M_B each) as PipeOffload's section 3 gives them at p = 8, v = 4,
// m = 32: GIS p v = 32, GIS-H g (v-1) + p = 20, interleaved 1F1B p v + p - 1 = 39.
TEST(GroupInterleaved, ValidEverywhereWithThePapersPeaks) {
  for (int p = 2; p <= 9; ++p) {
    for (int v = 2; v <= 5; ++v) {
      for (int g = 1; g <= p; ++g) {
        for (int m : {1, g, p, 2 * p + 1, 3 * p}) {
          const Problem problem = uniform_problem(p, m, 1, 1, 1, 0, v);
          const Schedule schedule = make_group_interleaved(problem, g, "test");
          ASSERT_TRUE(check_schedule(problem, schedule).ok()) << p << " " << v << " " << g << " " << m;
        }
      }
    }
  }
  const Problem problem = uniform_problem(8, 32, 1, 1, 1, 0, 4);
  const auto units = [&](const Schedule& schedule) { return peak(evaluate(problem, schedule)) * 4; };
  EXPECT_DOUBLE_EQ(units(make_group_interleaved(problem, 8, "gis")), 32);
  EXPECT_DOUBLE_EQ(units(make_group_interleaved(problem, 4, "gis-h")), 20);
  EXPECT_DOUBLE_EQ(units(make_1f1b_interleaved(problem)), 39);
}

Problem offload_problem(double k) {
  // PipeOffload's k: a round trip over F + B + W. Per chunk: 1/4 each pass.
  ProblemSpec spec = uniform_spec(8, 32, 1, 1, 1, 0, 4);
  spec.t_offload = {k * 3 / 2};  // per device, split over the 4 chunks like the pass times
  return spec.build();
}

// Issue 30: at p = 8, m = 32, PO-H holds at most 0.3 of interleaved 1F1B's activations, and its
// bubble stays within 2 points of it while k <= 1.
TEST(PipeOffload, PoHHoldsUnderAThirdOfInterleaved1F1BAtItsBubble) {
  const GeneratorRegistry registry = GeneratorRegistry::with_builtins();
  for (double k : {0.25, 0.5, 1.0}) {
    const Problem problem = offload_problem(k);
    const Trace base = evaluate(problem, generate(registry, "1f1b-i", problem));
    const Schedule po_h = generate(registry, "po-h", problem);
    ASSERT_TRUE(check_schedule(problem, po_h).ok()) << check_schedule(problem, po_h).message();
    const Trace trace = evaluate(problem, po_h);
    EXPECT_LE(peak(trace), 0.3 * peak(base)) << "k=" << k;
    EXPECT_LE(trace.metrics.bubble_rate, base.metrics.bubble_rate + 0.02) << "k=" << k;
    const Trace full = evaluate(problem, generate(registry, "po-f", problem));
    EXPECT_LT(peak(full), peak(trace)) << "k=" << k;
  }
}

TEST(OffloadPass, PlacesCopiesAroundEachOffloadedForward) {
  const Problem problem = offload_problem(0.5);
  const Schedule base = make_group_interleaved(problem, 4, "gis-h");
  const Schedule offloaded = with_offload(problem, base, 1, "test");
  EXPECT_EQ(offloaded.name, "gis-h+offload1");
  for (const auto& actions : offloaded.devices) {
    for (std::size_t i = 0; i < actions.size(); ++i) {
      if (actions[i].pass != Pass::O) continue;
      EXPECT_EQ(actions[i].chunk, 0);  // only chunk 0
      EXPECT_EQ(actions[i - 1], (Action{Pass::F, actions[i].microbatch, 0}));  // right after its forward
    }
  }
  EXPECT_TRUE(check_schedule(problem, offloaded).ok()) << check_schedule(problem, offloaded).message();
  EXPECT_EQ(with_offload(problem, base, 0, "test").devices, base.devices);
  EXPECT_THROW(with_offload(problem, base, 5, "test"), InputError);
  EXPECT_THROW(with_offload(problem, offloaded, 1, "test"), InputError);  // already offloads
  EXPECT_THROW(with_offload(uniform_problem(8, 32, 1, 1, 1, 0, 4), base, 1, "test"), InputError);  // no t_offload
}

}  // namespace
}  // namespace zb
