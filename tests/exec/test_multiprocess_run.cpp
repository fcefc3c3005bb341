// Multi-process runs on the CPU backend (ranks played by threads of this test on an in-memory
// transport; real MPI processes: test_zbexec_mpi.cpp): rank 0 gathers every device's results,
// and they equal a one-process run's and the reference's.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <ostream>

#include "exec/cpu/cpu_backend.h"
#include "exec/runtime/detail/device_output.h"
#include "exec/runtime/engine.h"
#include "exec/runtime/exec_error.h"
#include "exec/multiprocess/process_group.h"
#include "tests/exec/exec_test_support.h"
#include "tests/exec/thread_transport.h"

namespace zb::exec {
namespace {

using test::on_ranks;

struct Case {
  std::string generator;
  int p = 2;
  int m = 4;
  int chunks = 1;
  SyncMode mode = SyncMode::sync;
  bool inject = false;
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.generator << " p=" << c.p << " m=" << c.m << " v=" << c.chunks << " "
       << sync_mode_name(c.mode) << (c.inject ? " inject" : "");
}

class MultiProcessRun : public ::testing::TestWithParam<Case> {};

TEST_P(MultiProcessRun, RankZeroGathersWhatOneProcessComputes) {
  const Case& c = GetParam();
  const zb::Problem problem = test::unit_problem(
      c.p, c.m, c.chunks, c.chunks > 1 ? zb::Placement::interleaved : zb::Placement::linear);
  const zb::Schedule schedule = test::make(c.generator, problem);
  ExecOptions options = test::small_options(2 * problem.stages(), 3);
  options.mode = c.mode;
  options.optimizer.clip_norm = 0.05;  // some steps clip: the verdict's path matters
  if (c.inject) options.inject_nonfinite = NonfiniteInjection{1, problem.stages() - 1};

  CpuBackend one_process(c.p);
  const ExecResult expected = run_schedule(one_process, problem, schedule, options);
  const ReferenceResult reference = test::reference_for(options, problem);

  auto transports = test::thread_transports(c.p);
  const auto results = on_ranks<ExecResult>(c.p, [&](int rank) {
    auto group = std::make_unique<ProcessGroup>(std::move(transports[static_cast<std::size_t>(rank)]));
    ExecResult result;
    {
      CpuBackend backend(*group);
      EXPECT_TRUE(backend.is_local(rank));
      EXPECT_FALSE(backend.is_local((rank + 1) % c.p));
      result = run_schedule(backend, problem, schedule, options);
      // A second run on the same group and backend starts afresh and computes the same.
      const ExecResult again = run_schedule(backend, problem, schedule, options);
      EXPECT_EQ(again.gathered, result.gathered);
      if (again.gathered) {
        EXPECT_EQ(max_abs_difference(again.weights, result.weights), 0.0);
      }
    }
    group->finish();
    return result;
  });

  const ExecResult& gathered = results[0];
  ASSERT_TRUE(gathered.gathered);
  EXPECT_EQ(max_abs_difference(gathered.weights, reference.weights), 0.0);
  EXPECT_EQ(max_abs_difference(gathered.weights, expected.weights), 0.0);
  ASSERT_EQ(gathered.steps.size(), expected.steps.size());
  for (std::size_t k = 0; k < expected.steps.size(); ++k) {
    EXPECT_EQ(gathered.steps[k].loss, reference.steps[k].loss) << "step " << k;
    EXPECT_TRUE(same_decision(gathered.steps[k].decision, expected.steps[k].decision)) << "step " << k;
    EXPECT_EQ(gathered.steps[k].early_steps, expected.steps[k].early_steps) << "step " << k;
    EXPECT_EQ(gathered.steps[k].rollbacks, expected.steps[k].rollbacks) << "step " << k;
  }
  EXPECT_EQ(gathered.peak_activation_bytes, expected.peak_activation_bytes);
  // The trace of every step has every device's actions, on one time axis starting at 0.
  std::size_t actions = 0;
  for (const auto& list : schedule.devices) actions += list.size();
  for (const zb::Trace& trace : gathered.traces) {
    EXPECT_EQ(trace.devices, c.p);
    EXPECT_EQ(trace.spans.size(), actions);
    double first = 1e300;
    for (const zb::Span& span : trace.spans) {
      first = std::min(first, span.start);
      EXPECT_LE(span.start, span.end);
    }
    EXPECT_EQ(first, 0.0);
    EXPECT_EQ(trace.memory.size(), static_cast<std::size_t>(c.p));
  }
  for (int rank = 1; rank < c.p; ++rank) {
    EXPECT_FALSE(results[static_cast<std::size_t>(rank)].gathered);
    EXPECT_TRUE(results[static_cast<std::size_t>(rank)].weights.empty());
  }
}

INSTANTIATE_TEST_SUITE_P(
    Schedules, MultiProcessRun,
    ::testing::Values(Case{"1f1b", 3, 6}, Case{"zb-h1", 4, 8}, Case{"zb-h2", 3, 6},
                      Case{"1f1b-i", 2, 4, 2}, Case{"zb-h1", 3, 6, 1, SyncMode::post_validation},
                      Case{"zb-h2", 2, 4, 1, SyncMode::post_validation, true}),
    [](const ::testing::TestParamInfo<Case>& param_info) {
      const Case& c = param_info.param;
      std::string name = fmt::format("{}_p{}_v{}_{}{}", c.generator, c.p, c.chunks,
                                     c.mode == SyncMode::sync ? "sync" : "postval", c.inject ? "_inject" : "");
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

TEST(DeviceOutput, TheWireFormKeepsEveryBit) {
  DeviceOutput output;
  output.spans = {{zb::Span{0, zb::Stream::compute, zb::Pass::W, false, 5, 3, 1, 0, 12.25, 13.0 / 3.0}}, {}};
  output.memory_us = {{{1.5, 4096}, {2.5, 0}}, {}};
  DeviceStepOutcome first;
  first.decision.apply = false;
  first.decision.grad_norm = std::numeric_limits<double>::quiet_NaN();
  first.loss_sum = 0.1;
  first.has_loss = true;
  first.early_steps = 2;
  first.rollbacks = 1;
  DeviceStepOutcome second;
  second.decision.clipped = true;
  second.decision.grad_scale = 0.3f;
  output.steps = {first, second};
  output.peak_bytes = 8192;
  ModelWeights layers(1);
  layers[0][kW1] = {1.0f / 3.0f, -0.0f, 1e-38f};
  layers[0][kB2] = {7.0f};
  output.stage_weights = {{5, layers}};

  const DeviceOutput back = decode_device_output(encode(output), 3);
  ASSERT_EQ(back.spans.size(), 2u);
  const zb::Span& span = back.spans[0].at(0);
  EXPECT_EQ(span.device, 3);
  EXPECT_EQ(span.pass, zb::Pass::W);
  EXPECT_EQ(span.stage, 5);
  EXPECT_EQ(span.microbatch, 3);
  EXPECT_EQ(span.chunk, 1);
  EXPECT_EQ(span.end, 13.0 / 3.0);
  EXPECT_EQ(back.memory_us[0].at(0).value, 4096);
  EXPECT_FALSE(back.steps[0].decision.apply);
  EXPECT_TRUE(same_decision(back.steps[0].decision, first.decision));
  EXPECT_EQ(back.steps[0].loss_sum, 0.1);
  EXPECT_EQ(back.steps[0].rollbacks, 1);
  EXPECT_TRUE(back.steps[1].decision.clipped);
  EXPECT_EQ(back.steps[1].decision.grad_scale, 0.3f);
  EXPECT_EQ(back.peak_bytes, 8192);
  ASSERT_EQ(back.stage_weights.size(), 1u);
  EXPECT_EQ(back.stage_weights[0].first, 5);
  EXPECT_EQ(max_abs_difference(back.stage_weights[0].second, layers), 0.0);
  EXPECT_TRUE(std::signbit(back.stage_weights[0].second[0][kW1][1]));

  std::vector<double> truncated = encode(output);
  truncated.pop_back();
  EXPECT_THROW(decode_device_output(truncated, 0), ExecError);
}

}  // namespace
}  // namespace zb::exec
