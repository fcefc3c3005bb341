// The memory tracker's peak equals the simulator's for the same schedule, and measured traces are
// well-formed zb::Trace values that the core's writers accept.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "exec/calibration/calibrate.h"
#include "exec/calibration/predict.h"
#include "sim/core/evaluator.h"
#include "sim/core/optimizer_step.h"
#include "sim/core/problem_spec.h"
#include "tests/exec/exec_test_support.h"
#include "sim/core/evaluator.h"
#include "sim/formats/trace_json.h"
#include "sim/formats/trace_writers.h"
#include "sim/core/validator.h"

namespace zb::exec {
namespace {

// The calibrated problem: memory deltas in bytes measured from the model's saved tensors.
zb::Problem calibrated_problem(const ExecOptions& options, int p, int m, int chunks) {
  CpuBackend backend(p);
  CalibrationOptions calibration;
  calibration.model = options.model;
  calibration.devices = p;
  calibration.chunks = chunks;
  calibration.placement = chunks == 1 ? zb::Placement::linear : zb::Placement::interleaved;
  calibration.microbatches = m;
  calibration.repeats = 1;
  return calibrate(backend, calibration).spec.build("calibration");
}

struct MemoryCase {
  const char* generator;
  int p, m, chunks;
};

void PrintTo(const MemoryCase& c, std::ostream* out) {
  *out << c.generator << " p=" << c.p << " m=" << c.m << " v=" << c.chunks;
}

class ExecMemory : public ::testing::TestWithParam<MemoryCase> {};

TEST_P(ExecMemory, TrackerPeakEqualsTheSimulatorsPeak) {
  const MemoryCase c = GetParam();
  const ExecOptions options = test::small_options(c.p * c.chunks * 2, 2);
  const zb::Problem problem = calibrated_problem(options, c.p, c.m, c.chunks);
  const zb::Schedule schedule = test::make(c.generator, problem);
  CpuBackend backend(c.p);
  const ExecResult result = run_schedule(backend, problem, schedule, options);
  const zb::Trace simulated = zb::evaluate(problem, schedule);
  const auto by_order = zb::peak_memory_by_order(problem, schedule);
  ASSERT_EQ(result.peak_activation_bytes.size(), static_cast<std::size_t>(c.p));
  for (int d = 0; d < c.p; ++d) {
    EXPECT_GT(result.peak_activation_bytes[d], 0.0);
    EXPECT_EQ(result.peak_activation_bytes[d], simulated.metrics.peak_memory[d]) << "device " << d;
    EXPECT_EQ(result.peak_activation_bytes[d], by_order[d]) << "device " << d;
    // The measured trace's own memory timeline has the same peak.
    EXPECT_EQ(zb::peak_of(result.traces.back().memory[d]), result.peak_activation_bytes[d]);
  }
}

INSTANTIATE_TEST_SUITE_P(Schedules, ExecMemory,
                         ::testing::Values(MemoryCase{"gpipe", 2, 4, 1}, MemoryCase{"1f1b", 4, 8, 1},
                                           MemoryCase{"zb-h1", 4, 8, 1}, MemoryCase{"zb-h2", 3, 6, 1},
                                           MemoryCase{"zb-auto", 3, 6, 1},
                                           MemoryCase{"1f1b-i", 2, 4, 2}),
                         [](const auto& param_info) {
                           std::string name = param_info.param.generator;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name;
                         });

TEST(ExecTrace, MeasuredSpansFollowTheScheduleAndFeedTheWriters) {
  const zb::Problem problem = test::unit_problem(3, 6);
  const zb::Schedule schedule = test::make("zb-h1", problem);
  const ExecOptions options = test::small_options(3, 2);
  CpuBackend backend(3);
  const ExecResult result = run_schedule(backend, problem, schedule, options);
  ASSERT_EQ(result.traces.size(), 2u);
  const zb::Trace& trace = result.traces.back();
  EXPECT_EQ(trace.meta.engine, "cpu");
  EXPECT_EQ(trace.meta.schedule, schedule.name);
  EXPECT_EQ(trace.meta.time_unit, zb::TimeUnit::ms);
  EXPECT_EQ(trace.devices, 3);
  ASSERT_EQ(trace.spans.size(), schedule.action_count());
  // Spans come per device in the schedule's order, never overlap, and start at t >= 0.
  std::size_t i = 0;
  double first_start = 1e300;
  for (int d = 0; d < 3; ++d) {
    double previous_end = -1;
    for (const auto& action : schedule.devices[static_cast<std::size_t>(d)]) {
      const zb::Span& span = trace.spans[i++];
      EXPECT_EQ(span.device, d);
      EXPECT_EQ(span.pass, action.pass);
      EXPECT_EQ(span.microbatch, action.microbatch);
      EXPECT_EQ(span.stage, problem.stage_of(d, action.chunk));
      EXPECT_GE(span.start, previous_end);
      EXPECT_GT(span.end, span.start);
      previous_end = span.end;
      first_start = std::min(first_start, span.start);
    }
  }
  EXPECT_EQ(first_start, 0.0);
  // F of stage s+1 cannot start before F of stage s ended (it needs the activation), nor B of
  // stage s before B of stage s+1 ended (it needs the gradient).
  for (const auto& later : trace.spans) {
    for (const auto& earlier : trace.spans) {
      if (earlier.pass != later.pass || earlier.microbatch != later.microbatch) continue;
      const bool feeds = (later.pass == zb::Pass::F && earlier.stage == later.stage - 1) ||
                         (later.pass == zb::Pass::B && earlier.stage == later.stage + 1);
      if (feeds) {
        EXPECT_GE(later.start, earlier.end);
      }
    }
  }
  EXPECT_GT(trace.metrics.span, 0);
  EXPECT_GE(trace.metrics.bubble_rate, 0);
  EXPECT_LT(trace.metrics.bubble_rate, 1);
  // The core's writers and reader accept a measured trace unchanged.
  const zb::Trace back = zb::trace_from_json(zb::to_json(trace), "round trip");
  EXPECT_EQ(back.spans.size(), trace.spans.size());
  EXPECT_EQ(back.meta.engine, "cpu");
  const std::string chrome = zb::to_chrome_trace({{"measured", &trace}});
  EXPECT_TRUE(nlohmann::json::accept(chrome));
  EXPECT_NE(zb::to_svg({{"measured", &trace}}).find("<svg"), std::string::npos);
}

// Several steps on one clock: in sync mode (and in post-validation, which awaits the verdict) no
// device starts a step before every device has finished the previous one, since the verdict
// needs every device's partial norm.
TEST(ExecTrace, StepsLieOnOneClockAndFollowEachOther) {
  const zb::Problem problem = test::unit_problem(3, 6);
  const zb::Schedule schedule = test::make("zb-h1", problem);
  for (const SyncMode mode : {SyncMode::sync, SyncMode::post_validation}) {
    ExecOptions options = test::small_options(3, 3);
    options.mode = mode;
    CpuBackend backend(3);
    const ExecResult result = run_schedule(backend, problem, schedule, options);
    ASSERT_EQ(result.step_origins_ms.size(), 3u);
    EXPECT_EQ(result.step_origins_ms[0], 0.0);
    for (std::size_t k = 1; k < 3; ++k) {
      EXPECT_GE(result.step_origins_ms[k], result.step_origins_ms[k - 1] + result.traces[k - 1].metrics.makespan);
    }
    const zb::Problem calibrated = calibrated_problem(options, 3, 6, 1);
    const PredictionReport report = compare_prediction(calibrated, schedule, options, result.traces, result.step_origins_ms);
    EXPECT_GT(report.measured_period, 0);
    // The predicted period is the evaluator's over the run's steps in the run's mode.
    zb::EvalOptions eval = prediction_options(options);
    EXPECT_EQ(eval.steps, 3);
    EXPECT_EQ(eval.optimizer.await_verdict, mode == SyncMode::post_validation);
    EXPECT_DOUBLE_EQ(report.predicted_period, zb::steady_step_time(zb::evaluate(calibrated, schedule, eval).step_ends));
  }
}

// The replayed period takes the run's own pass costs: fed the evaluator's trace of one problem as
// the measured steps, it is that problem's period, whatever the calibration said.
TEST(ExecPrediction, TheReplayedPeriodIsTheModelOnTheRunsOwnCosts) {
  zb::ProblemSpec spec;
  spec.devices = 3;
  spec.microbatches = 6;
  spec.t_f = {1.0};
  spec.t_b = {1.0};
  spec.t_w = {1.0};
  spec.t_opt = {2.0};
  const zb::Problem calibrated = spec.build("calibration");
  spec.t_f = {1.5, 1.25, 2.0};  // what "ran": slower than calibrated, unevenly
  spec.t_b = {2.0, 1.75, 2.5};
  spec.t_w = {0.75, 1.0, 1.5};
  const zb::Problem ran = spec.build("run");
  const zb::Schedule schedule = test::make("zb-h1", calibrated);
  ExecOptions options = test::small_options(3, 3);
  const zb::EvalOptions eval = prediction_options(options);
  const zb::Trace one_step = zb::evaluate(ran, schedule);
  const std::vector<zb::Trace> steps(3, one_step);
  const std::vector<double> origins{0.0, 40.0, 80.0};
  const PredictionReport report = compare_prediction(calibrated, schedule, options, steps, origins);
  EXPECT_DOUBLE_EQ(report.predicted_period, zb::steady_step_time(zb::evaluate(calibrated, schedule, eval).step_ends));
  EXPECT_DOUBLE_EQ(report.replayed_period, zb::steady_step_time(zb::evaluate(ran, schedule, eval).step_ends));
  EXPECT_GT(report.replayed_period, report.predicted_period);
  EXPECT_NE(format_prediction(report).find("replayed"), std::string::npos);
}

// The calibration times the optimizer's update per stage (summed per device) and the control
// message of the norm all-reduce, and writes them as t_opt and t_reduce_hop.
TEST(ExecCalibration, TimesTheUpdateAndTheAllReduceHop) {
  const ExecOptions options = test::small_options(4, 1);
  CpuBackend backend(2);
  CalibrationOptions calibration;
  calibration.model = options.model;
  calibration.devices = 2;
  calibration.chunks = 2;
  calibration.placement = zb::Placement::interleaved;
  calibration.repeats = 1;
  const Calibration result = calibrate(backend, calibration);
  ASSERT_EQ(result.t_opt_ms.size(), 4u);
  for (const double t : result.t_opt_ms) EXPECT_GT(t, 0);
  ASSERT_EQ(result.spec.t_opt.size(), 2u);
  EXPECT_DOUBLE_EQ(result.spec.t_opt[0], result.t_opt_ms[0] + result.t_opt_ms[2]);
  EXPECT_DOUBLE_EQ(result.spec.t_opt[1], result.t_opt_ms[1] + result.t_opt_ms[3]);
  EXPECT_GE(result.spec.t_reduce_hop, 0);
  EXPECT_EQ(result.spec.t_reduce_hop, result.t_reduce_hop_ms);
}

}  // namespace
}  // namespace zb::exec
