// Every schedule on the CUDA backend: weights after 3 steps equal the single-GPU reference of the
// same kernels bitwise, post-validation equals sync, traces cover every action (GPU).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <ostream>
#include <tuple>

#include "exec/cuda/detail/cuda_backend.h"
#include "sim/app/catalog/generators.h"
#include "exec/runtime/reference.h"
#include "tests/exec/cuda/gpu_test_support.h"
#include "sim/core/generators/generator_registry.h"

namespace zb::exec::cuda {
namespace {

enum class Mode { virtual_green, virtual_streams, gpus };

struct Case {
  std::string generator;
  int p = 2;
  int m = 4;
  int chunks = 1;
  bool sgd = false;
  Mode mode = Mode::virtual_green;
};

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::virtual_green: return "virtual_green";
    case Mode::virtual_streams: return "virtual_streams";
    case Mode::gpus: return "gpus";
  }
  return "?";
}

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.generator << " p=" << c.p << " m=" << c.m << " v=" << c.chunks << (c.sgd ? " sgd " : " adamw ")
      << mode_name(c.mode);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = fmt::format("{}_p{}_m{}_v{}_{}_{}", info.param.generator, info.param.p,
                                 info.param.m, info.param.chunks, info.param.sgd ? "sgd" : "adamw",
                                 mode_name(info.param.mode));
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  const auto& registry = zb::catalog::generators();
  int n = 0;
  for (const auto& name : registry.names()) {
    if (name == "zb-ilp") continue;  // the solver's time limit, not the GPU, would dominate
    const zb::GeneratorInfo& info = registry.get(name);
    std::vector<std::tuple<int, int, int>> shapes;
    if (info.chunks == zb::ChunkSupport::multi) {
      shapes = {{2, 4, 2}, {4, 8, 2}};
    } else {
      shapes = {{2, 5, 1}, {4, 8, 1}};
    }
    for (auto [p, m, v] : shapes) {
      for (Mode mode : {Mode::virtual_green, Mode::virtual_streams, Mode::gpus}) {
        cases.push_back({name, p, m, v, (n++ % 2) == 1, mode});
      }
    }
  }
  return cases;
}

std::unique_ptr<CudaBackend> make_backend_for(Mode mode, int p) {
  if (mode == Mode::gpus) {
    return std::make_unique<CudaBackend>(parse_device_set("", p), CudaOptions{});
  }
  CudaOptions options;
  options.sm_partition = mode == Mode::virtual_green ? SmPartition::green : SmPartition::streams;
  return std::make_unique<CudaBackend>(parse_device_set(fmt::format("virtual:{}", p), p), options);
}

class CudaBitwise : public ::testing::TestWithParam<Case> {};

TEST_P(CudaBitwise, WeightsAfterThreeStepsEqualTheSingleGpuReference) {
  ZB_SKIP_WITHOUT_GPU();
  const Case& c = GetParam();
  if (c.mode == Mode::gpus && test::gpu_count() < c.p) {
    GTEST_SKIP() << "needs " << c.p << " GPUs, have " << test::gpu_count();
  }
  // The V generators build for their own placement; the others for the looped one.
  const zb::Problem problem = test::unit_problem(
      c.p, c.m, c.chunks,
      zb::catalog::generators().get(c.generator).placement.value_or(c.chunks == 1 ? zb::Placement::linear
                                                                                  : zb::Placement::interleaved));
  const zb::Schedule schedule = zb::generate(zb::catalog::generators(), c.generator, problem);
  ExecOptions options = test::small_options(problem.stages() + 1);  // an uneven split
  if (c.sgd) options.optimizer.kind = OptimizerKind::sgd;
  auto backend = make_backend_for(c.mode, c.p);
  backend->label_actions(schedule);
  const ExecResult result = run_schedule(*backend, problem, schedule, options);
  // The reference: every layer on device 0 of the same backend (same kernels, same SM share).
  const ReferenceResult reference =
      run_reference(backend->device(0), options.model, options.optimizer, problem.microbatches,
                    options.steps, options.inject_nonfinite, problem.stages());
  EXPECT_EQ(max_abs_difference(result.weights, reference.weights), 0.0) << backend->summary();
  ASSERT_EQ(result.steps.size(), reference.steps.size());
  for (std::size_t k = 0; k < result.steps.size(); ++k) {
    EXPECT_EQ(result.steps[k].loss, reference.steps[k].loss) << "step " << k;
  }
  const auto initial = run_reference(backend->device(0), options.model, options.optimizer, c.m, 0,
                                     {}, 1).weights;
  EXPECT_GT(max_abs_difference(result.weights, initial), 1e-6);
  // Every action has a measured span, in order on its device.
  std::size_t actions = 0;
  for (const auto& list : schedule.devices) actions += list.size();
  for (const auto& trace : result.traces) {
    ASSERT_EQ(trace.spans.size(), actions);
    for (const auto& span : trace.spans) EXPECT_LE(span.start, span.end);
    EXPECT_GT(trace.metrics.span, 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(AllGenerators, CudaBitwise, ::testing::ValuesIn(all_cases()), case_name);

TEST(CudaPostValidation, EqualsSyncBitwiseWithClippingAndANonFiniteStep) {
  ZB_SKIP_WITHOUT_GPU();
  const zb::Problem problem = test::unit_problem(4, 8);
  const zb::Schedule schedule = zb::generate(zb::catalog::generators(), "zb-h1", problem);
  ExecOptions options = test::small_options(problem.stages(), 4);
  options.optimizer.clip_norm = 0.05;  // clips some steps: early steps must roll back
  options.inject_nonfinite = NonfiniteInjection{2, 1};
  CudaOptions cuda_options;
  cuda_options.sm_partition = SmPartition::streams;
  CudaBackend backend(parse_device_set("virtual:4", 4), cuda_options);
  options.mode = SyncMode::sync;
  const ExecResult sync = run_schedule(backend, problem, schedule, options);
  options.mode = SyncMode::post_validation;
  const ExecResult post = run_schedule(backend, problem, schedule, options);
  EXPECT_EQ(max_abs_difference(sync.weights, post.weights), 0.0);
  ASSERT_EQ(sync.steps.size(), post.steps.size());
  for (std::size_t k = 0; k < sync.steps.size(); ++k) {
    EXPECT_EQ(sync.steps[k].loss, post.steps[k].loss) << "step " << k;
    EXPECT_TRUE(same_decision(sync.steps[k].decision, post.steps[k].decision)) << "step " << k;
  }
  EXPECT_FALSE(post.steps[2].decision.apply);  // the injected NaN skipped step 2
}

// DualPipeV's overlapped pairs run their two parts on two streams (CudaDevice::switch_to_partner):
// still bitwise equal to the reference, and the partner starts before the first part ends.
TEST(CudaOverlap, PairPartsRunConcurrentlyAndStayBitwise) {
  ZB_SKIP_WITHOUT_GPU();
  const zb::Problem problem = test::unit_problem(4, 8, 2, zb::Placement::vshape);
  const zb::Schedule schedule = zb::generate(zb::catalog::generators(), "dualpipe-v", problem);
  ExecOptions options = test::small_options(problem.stages(), 2);
  options.model.hidden = 512;  // kernels long enough to be seen overlapping
  CudaOptions cuda_options;
  cuda_options.sm_partition = SmPartition::streams;
  CudaBackend backend(parse_device_set("virtual:4", 4), cuda_options);
  const ExecResult result = run_schedule(backend, problem, schedule, options);
  const ReferenceResult reference =
      run_reference(backend.device(0), options.model, options.optimizer, problem.microbatches,
                    options.steps, options.inject_nonfinite, problem.stages());
  EXPECT_EQ(max_abs_difference(result.weights, reference.weights), 0.0);
  int pairs = 0;
  int concurrent = 0;
  for (const auto& trace : result.traces) {
    for (int d = 0; d < problem.devices; ++d) {
      std::vector<const zb::Span*> spans;  // device d's, in its list's order
      for (const zb::Span& span : trace.spans) {
        if (span.device == d) spans.push_back(&span);
      }
      const auto& list = schedule.devices[static_cast<std::size_t>(d)];
      ASSERT_EQ(spans.size(), list.size());
      for (std::size_t i = 0; i + 1 < list.size(); ++i) {
        if (!list[i].overlap_next) continue;
        ++pairs;
        if (spans[i + 1]->start < spans[i]->end) ++concurrent;
        ++i;
      }
    }
  }
  EXPECT_GT(pairs, 0);
  EXPECT_GT(concurrent, 0) << "of " << pairs << " pairs, none ran its parts concurrently";
}

TEST(CudaVShape, LocalStageBoundaryMatchesTheReference) {
  ZB_SKIP_WITHOUT_GPU();
  const zb::Problem problem = test::unit_problem(3, 4, 2, zb::Placement::vshape);
  zb::Schedule schedule;
  schedule.name = "v-gpipe";
  schedule.devices.resize(3);
  for (int d = 0; d < 3; ++d) {
    auto& list = schedule.devices[static_cast<std::size_t>(d)];
    for (int chunk : {0, 1}) {
      for (int mb = 0; mb < problem.microbatches; ++mb) list.push_back({zb::Pass::F, mb, chunk});
    }
    for (int chunk : {1, 0}) {
      for (int mb = 0; mb < problem.microbatches; ++mb) {
        list.push_back({zb::Pass::B, mb, chunk});
        list.push_back({zb::Pass::W, mb, chunk});
      }
    }
  }
  const ExecOptions options = test::small_options(problem.stages());
  CudaBackend backend(parse_device_set("virtual:3", 3), CudaOptions{});
  const ExecResult result = run_schedule(backend, problem, schedule, options);
  const ReferenceResult reference =
      run_reference(backend.device(0), options.model, options.optimizer, problem.microbatches,
                    options.steps, options.inject_nonfinite, problem.stages());
  EXPECT_EQ(max_abs_difference(result.weights, reference.weights), 0.0);
}

TEST(CudaBackendErrors, MissingGpuIsBadInput) {
  ZB_SKIP_WITHOUT_GPU();
  EXPECT_THROW(CudaBackend(parse_device_set("cuda:999", 1), CudaOptions{}), InputError);
}

}  // namespace
}  // namespace zb::exec::cuda
