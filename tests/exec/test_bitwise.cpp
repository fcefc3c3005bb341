// Every generator, several shapes: the weights after 3 steps equal the single-device reference
// bitwise (and so do the per-step losses).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <ostream>

#include "sim/app/catalog/generators.h"
#include "tests/exec/exec_test_support.h"
#include "sim/support/atomic_file.h"
#include "sim/core/generators/generator_registry.h"
#include "tests/testing/problems.h"
#include "sim/core/problem_spec.h"
#include "sim/formats/pytorch_csv.h"

namespace zb::exec {
namespace {

struct Case {
  std::string generator;
  int p = 2;
  int m = 4;
  int chunks = 1;
  bool sgd = false;
};

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.generator << " p=" << c.p << " m=" << c.m << " v=" << c.chunks << (c.sgd ? " sgd" : " adamw");
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = fmt::format("{}_p{}_m{}_v{}_{}", info.param.generator, info.param.p,
                                 info.param.m, info.param.chunks, info.param.sgd ? "sgd" : "adamw");
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
    const zb::GeneratorInfo& info = registry.get(name);
    if (name == "zb-ilp") {
      cases.push_back({name, 2, 4, 1, false});  // the solver is slow: one small shape
      continue;
    }
    if (info.chunks == zb::ChunkSupport::multi) {
      for (auto [p, m, v] : {std::tuple{2, 4, 2}, std::tuple{4, 8, 2}, std::tuple{2, 4, 3}}) {
        if (info.placement && v != 2) continue;  // a V and the two copies have two chunks
        cases.push_back({name, p, m, v, (n++ % 2) == 1});
      }
      continue;
    }
    for (auto [p, m] : {std::pair{2, 2}, std::pair{2, 5}, std::pair{3, 6}, std::pair{4, 8}}) {
      cases.push_back({name, p, m, 1, (n++ % 2) == 1});
    }
  }
  return cases;
}

class ExecBitwise : public ::testing::TestWithParam<Case> {};

TEST_P(ExecBitwise, WeightsAfterThreeStepsEqualTheReference) {
  const Case& c = GetParam();
  const zb::Problem problem = test::unit_problem(
      c.p, c.m, c.chunks,
      zb::catalog::generators().get(c.generator).placement.value_or(c.chunks == 1 ? zb::Placement::linear
                                                                                  : zb::Placement::interleaved));
  const zb::Schedule schedule = test::make(c.generator, problem);
  // One more layer than stages, so the split is uneven.
  ExecOptions options = test::small_options(problem.stages() + 1);
  if (c.sgd) options.optimizer.kind = OptimizerKind::sgd;
  CpuBackend backend(c.p);
  const ExecResult result = run_schedule(backend, problem, schedule, options);
  const ReferenceResult reference = test::reference_for(options, problem);
  EXPECT_EQ(max_abs_difference(result.weights, reference.weights), 0.0);
  ASSERT_EQ(result.steps.size(), reference.steps.size());
  for (std::size_t k = 0; k < result.steps.size(); ++k) {
    EXPECT_EQ(result.steps[k].loss, reference.steps[k].loss) << "step " << k;
    EXPECT_TRUE(same_decision(result.steps[k].decision, reference.steps[k].decision)) << "step " << k;
  }
  // The weights moved: equality is not the trivial "nothing happened".
  CpuDevice device(0, CpuDevice::Clock::now());
  const auto initial = run_reference(device, options.model, options.optimizer, c.m, 0, {}, 1).weights;
  EXPECT_GT(max_abs_difference(result.weights, initial), 1e-6);
}

INSTANTIATE_TEST_SUITE_P(AllGenerators, ExecBitwise, ::testing::ValuesIn(all_cases()), case_name);

// A V-shaped placement (device d holds stages d and 2p-1-d): the turn at the bottom of the V is a
// channel from a device to itself. GPipe-like order per chunk, with B and W split.
zb::Schedule v_shape_schedule(const zb::Problem& problem) {
  zb::Schedule schedule;
  schedule.name = "v-gpipe";
  schedule.devices.resize(static_cast<std::size_t>(problem.devices));
  for (int d = 0; d < problem.devices; ++d) {
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
  return schedule;
}

TEST(ExecBitwiseVShape, LocalStageBoundaryAndTwoChunksMatchTheReference) {
  const zb::Problem problem = test::unit_problem(3, 4, 2, zb::Placement::vshape);
  ExecOptions options = test::small_options(problem.stages());
  CpuBackend backend(3);
  const ExecResult result = run_schedule(backend, problem, v_shape_schedule(problem), options);
  EXPECT_EQ(max_abs_difference(result.weights, test::reference_for(options, problem).weights), 0.0);
}

// Offload (O, L): the saved tensors go to host memory and back; the weights are the reference's,
// and the device holds less than the same order without the copies.
TEST(ExecBitwiseOffload, CopiesToHostAndBackKeepTheBitsAndFreeDeviceMemory) {
  const zb::Problem problem = test::unit_problem(4, 8, 2, zb::Placement::interleaved);
  ExecOptions options = test::small_options(problem.stages());
  const zb::Schedule offloaded = test::make("po-f", problem);
  ASSERT_TRUE(zb::has_copies(offloaded));
  zb::Schedule plain = offloaded;
  for (auto& actions : plain.devices) std::erase_if(actions, [](const zb::Action& a) { return zb::is_copy(a.pass); });
  CpuBackend backend(4);
  const ExecResult with_copies = run_schedule(backend, problem, offloaded, options);
  const ExecResult without = run_schedule(backend, problem, plain, options);
  EXPECT_EQ(max_abs_difference(with_copies.weights, test::reference_for(options, problem).weights), 0.0);
  EXPECT_LT(with_copies.peak_activation_bytes[0], without.peak_activation_bytes[0]);
  const auto& spans = with_copies.traces[0].spans;
  EXPECT_TRUE(std::any_of(spans.begin(), spans.end(), [](const zb::Span& s) { return s.stream == zb::Stream::copy; }));
}

// Schedules written by PyTorch's own scheduler (copies of ../shared/fixtures/pytorch): a looped
// ZB1P with 2 chunks and DualPipeV (V placement, OVERLAP_F_B composites) run exactly too.
TEST(ExecBitwisePytorch, PytorchWrittenSchedulesMatchTheReference) {
  for (const char* name : {"zb1p_2rank_2stagep_compute.csv", "dualpipev_4rank_10mb.csv"}) {
    const std::string path = std::string(ZB_SOURCE_DIR) + "/tests/data/pytorch/" + name;
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "fixture missing: " << path;
    const zb::ImportedSchedule imported = zb::parse_pytorch_csv(zb::read_file(path), name);
    const zb::Problem problem = zb::testing::imported_spec(imported).build(name);
    ExecOptions options = test::small_options(problem.stages());
    options.mode = SyncMode::post_validation;
    CpuBackend backend(problem.devices);
    const ExecResult result = run_schedule(backend, problem, imported.schedule, options);
    EXPECT_EQ(max_abs_difference(result.weights, test::reference_for(options, problem).weights), 0.0) << name;
  }
}

}  // namespace
}  // namespace zb::exec
