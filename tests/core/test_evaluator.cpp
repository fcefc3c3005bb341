// The evaluator: exact times on hand-checked cases, transfers, memory timeline, metrics.
#include <gtest/gtest.h>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generators.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

const Span& compute_span(const Trace& trace, int device, Pass pass, int microbatch) {
  for (const Span& span : trace.spans) {
    if (span.stream == Stream::compute && span.device == device && span.pass == pass && span.microbatch == microbatch) {
      return span;
    }
  }
  throw std::runtime_error("span not found");
}

TEST(Evaluator, HandCheckedTimesWithCommunication) {
  const Problem problem = testing::uniform_problem(2, 2, 1, 1, 1, 1);
  const Trace trace = evaluate(problem, make_zb_h1(problem));
  // d0: F0 F1 B0 W0 B1 W1; d1: F0 B0 F1 B1 W0 W1 (see test_closed_forms for the derivation).
  EXPECT_DOUBLE_EQ(compute_span(trace, 1, Pass::F, 0).start, 2);
  EXPECT_DOUBLE_EQ(compute_span(trace, 1, Pass::F, 1).start, 4);
  EXPECT_DOUBLE_EQ(compute_span(trace, 0, Pass::B, 0).start, 5);
  EXPECT_DOUBLE_EQ(compute_span(trace, 0, Pass::B, 1).start, 7);
  EXPECT_DOUBLE_EQ(compute_span(trace, 0, Pass::W, 1).end, 9);
  EXPECT_DOUBLE_EQ(trace.metrics.makespan, 9);
  EXPECT_DOUBLE_EQ(trace.metrics.span, 9);
  EXPECT_DOUBLE_EQ(trace.metrics.device_span[1], 6);
  EXPECT_DOUBLE_EQ(trace.metrics.work, 6);
  EXPECT_DOUBLE_EQ(trace.metrics.bubble_rate, 3.0 / 9.0);
  EXPECT_DOUBLE_EQ(trace.metrics.idle[0], 3);
  EXPECT_DOUBLE_EQ(trace.metrics.idle[1], 3);
}

TEST(Evaluator, TransfersAreRecordedOnBothDevices) {
  const Problem problem = testing::uniform_problem(2, 1, 1, 1, 1, 0.5);
  const Trace trace = evaluate(problem, make_1f1b(problem));
  int sends = 0;
  int recvs = 0;
  for (const Span& span : trace.spans) {
    if (span.stream == Stream::send) {
      ++sends;
      EXPECT_DOUBLE_EQ(span.duration(), 0.5);
    }
    if (span.stream == Stream::recv) ++recvs;
  }
  EXPECT_EQ(sends, 2);  // the activation forward and the gradient back
  EXPECT_EQ(recvs, 2);
  const Trace no_comm = evaluate(testing::uniform_problem(2, 1, 1, 1, 1), make_1f1b(problem));
  for (const Span& span : no_comm.spans) EXPECT_EQ(span.stream, Stream::compute);
}

TEST(Evaluator, MemoryTimelineFollowsThePasses) {
  ProblemSpec spec;
  spec.devices = 1;
  spec.microbatches = 2;
  spec.t_f = spec.t_b = spec.t_w = {1.0};
  spec.mem_f = {4};
  spec.mem_b = {-3};
  spec.mem_w = {-1};
  const Problem problem = spec.build();
  const Trace trace = evaluate(problem, parse_schedule_text("d0: F0 F1 B0 B1 W0 W1", "t"));
  const std::vector<MemoryPoint>& memory = trace.memory[0];
  ASSERT_EQ(memory.size(), 7u);
  EXPECT_DOUBLE_EQ(memory[1].time, 0);  // F0 allocates at its start
  EXPECT_DOUBLE_EQ(memory[1].value, 4);
  EXPECT_DOUBLE_EQ(memory[2].value, 8);
  EXPECT_DOUBLE_EQ(memory[3].time, 3);  // B0 frees at its end
  EXPECT_DOUBLE_EQ(memory[3].value, 5);
  EXPECT_DOUBLE_EQ(memory.back().value, 0);
  EXPECT_DOUBLE_EQ(trace.metrics.peak_memory[0], 8);
}

TEST(Evaluator, MetricsFromSpansEqualTheFastPath) {
  const Problem problem = testing::uniform_problem(4, 9, 1.5, 2, 0.75, 0.3);
  for (const Schedule& schedule : {make_1f1b(problem), make_zb_h1(problem), make_zb_h2(problem), make_gpipe(problem)}) {
    const Trace trace = evaluate(problem, schedule);
    const Metrics again = compute_metrics(trace, problem.work());
    EXPECT_DOUBLE_EQ(again.span, trace.metrics.span);
    EXPECT_DOUBLE_EQ(again.makespan, trace.metrics.makespan);
    EXPECT_DOUBLE_EQ(again.bubble_rate, trace.metrics.bubble_rate);
    EXPECT_EQ(again.busy, trace.metrics.busy);
    EXPECT_EQ(again.idle, trace.metrics.idle);
    EXPECT_EQ(again.peak_memory, trace.metrics.peak_memory);
    const Trace bare = evaluate(problem, schedule, {.record_spans = false, .record_memory = false});
    EXPECT_TRUE(bare.spans.empty());
    EXPECT_DOUBLE_EQ(bare.metrics.span, trace.metrics.span);
    EXPECT_EQ(bare.metrics.peak_memory, trace.metrics.peak_memory);
  }
}

TEST(Evaluator, DeadlockAndForeignActionsThrow) {
  const Problem problem = testing::uniform_problem(2, 2, 1, 1, 1);
  EXPECT_THROW(evaluate(problem, parse_schedule_text("d0: F0 B0 W0 F1 B1 W1\nd1: F0 F1 B1 W1 B0 W0\n", "t")),
               ScheduleError);
  EXPECT_THROW(evaluate(problem, parse_schedule_text("d0: F5\nd1: F0\n", "t")), ScheduleError);
  EXPECT_THROW(evaluate(problem, parse_schedule_text("d0: F0\n", "t")), ScheduleError);
}

// A recording run checks every action before it starts, a bare run each when it reaches it: the
// same schedule must fail with the same message either way (the first failure in run order).
TEST(Evaluator, RecordingRefusesWhatABareRunRefuses) {
  const Problem problem = testing::uniform_problem(2, 2, 1, 1, 1);
  const EvalOptions bare{.record_spans = false, .record_transfers = false, .record_memory = false};
  const auto message = [&](const char* text, const EvalOptions& options) {
    try {
      evaluate(problem, parse_schedule_text(text, "t"), options);
    } catch (const ScheduleError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  const char* cases[] = {
      "d0: F0 F1 B1 W1 B0 W0 F7\nd1: F0 B0 W0 F1 B1 W1\n",  // outside, after a run of valid actions
      "d0: F0 B0 W0 F1 B1 W1\nd1: F1 B1 F0 W1 B0 W0 F3\n",  // deadlocks before its outside action
      "d0: F0 B0 W0 F1 B1 W1 F0.1\nd1: F0 B0 W0 F1 B1 W1\n",  // outside chunk
  };
  for (const char* text : cases) {
    const std::string want = message(text, bare);
    EXPECT_NE(want, "no error") << text;
    EXPECT_EQ(message(text, EvalOptions{}), want) << text;
    EXPECT_EQ(message(text, EvalOptions{.record_spans = true, .record_transfers = false, .record_memory = false}),
              want)
        << text;
    EXPECT_EQ(message(text, EvalOptions{.record_spans = false, .record_transfers = false, .record_memory = true}),
              want)
        << text;
  }
}

TEST(Evaluator, SameDeviceBoundaryHasNoTransfer) {
  // V placement: stages 1 and 2 share device 1, so F of stage 2 starts right after stage 1.
  ProblemSpec spec;
  spec.devices = 2;
  spec.microbatches = 1;
  spec.chunks = 2;
  spec.placement = Placement::vshape;
  spec.t_f = spec.t_b = spec.t_w = {2.0};
  spec.t_comm = {5.0};
  const Problem problem = spec.build();
  const Schedule schedule = parse_schedule_text("d0: F0 F0.1 BW0.1 BW0\nd1: F0 F0.1 BW0.1 BW0\n", "v");
  const Trace trace = evaluate(problem, schedule);
  // d0 F0 [0,1]; d1 F0 [6,7], F0.1 [7,8]; d0 F0.1 [13,14] BW0.1 [14,16]; d1 BW0.1 [21,23] BW0 [23,25];
  // d0 BW0 [30,32].
  EXPECT_DOUBLE_EQ(trace.metrics.makespan, 32);
}

}  // namespace
}  // namespace zb
