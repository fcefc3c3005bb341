// Multi-process CUDA runs (one GPU per rank), with the ranks as threads of this test (on an
// in-memory transport, tests/exec/thread_transport.h; zbexec's is MPI): weights
// after three steps equal the single-GPU reference bitwise on rank 0, which gathers them (GPU).
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <exception>
#include <filesystem>
#include <memory>
#include <ostream>
#include <thread>
#include <vector>

#include "exec/cuda/detail/cuda_backend.h"
#include "sim/app/catalog/generators.h"
#include "exec/multiprocess/process_group.h"
#include "tests/exec/thread_transport.h"
#include "exec/runtime/reference.h"
#include "tests/exec/cuda/gpu_test_support.h"
#include "sim/core/generators/generator_registry.h"

namespace zb::exec::cuda {
namespace {

struct RankOutcome {
  ExecResult result;
  std::string summary;
  std::string error;
};

// Runs `schedule` with rank r of `world` on cuda:r, every rank in its own thread.
std::vector<RankOutcome> run_as_ranks(const zb::Problem& problem, const zb::Schedule& schedule,
                                      const ExecOptions& options) {
  usable_gpu_count();  // sets the CUDA environment once, before the ranks' threads read it
  const int world = problem.devices;
  auto transports = zb::exec::test::thread_transports(world);
  std::vector<RankOutcome> outcomes(static_cast<std::size_t>(world));
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r) {
    ranks.emplace_back([&, r] {
      RankOutcome& out = outcomes[static_cast<std::size_t>(r)];
      try {
        auto group = std::make_unique<ProcessGroup>(std::move(transports[static_cast<std::size_t>(r)]));
        {
          CudaBackend backend(*group, r, CudaOptions{});
          out.summary = backend.summary();
          backend.label_actions(schedule);
          out.result = run_schedule(backend, problem, schedule, options);
        }
        group->finish();
      } catch (const std::exception& error) {
        out.error = error.what();
      }
    });
  }
  for (auto& rank : ranks) rank.join();
  return outcomes;
}

struct Case {
  std::string generator;
  int p = 2;
  int m = 4;
  int chunks = 1;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.generator << " p=" << c.p << " m=" << c.m << " v=" << c.chunks;
}

class CudaRanks : public ::testing::TestWithParam<Case> {};

TEST_P(CudaRanks, WeightsOnRankZeroEqualTheSingleGpuReference) {
  ZB_SKIP_WITHOUT_GPU();
  const Case& c = GetParam();
  if (test::gpu_count() < c.p) GTEST_SKIP() << "needs " << c.p << " GPUs, have " << test::gpu_count();
  const zb::Problem problem = test::unit_problem(
      c.p, c.m, c.chunks, c.chunks == 1 ? zb::Placement::linear : zb::Placement::interleaved);
  const zb::Schedule schedule = zb::generate(zb::catalog::generators(), c.generator, problem);
  const ExecOptions options = test::small_options(problem.stages() + 1);
  const std::vector<RankOutcome> outcomes = run_as_ranks(problem, schedule, options);
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    ASSERT_EQ(outcomes[r].error, "") << "rank " << r;
    EXPECT_EQ(outcomes[r].result.gathered, r == 0) << "rank " << r;
    EXPECT_NE(outcomes[r].summary.find(fmt::format("rank {} of {}", r, c.p)), std::string::npos)
        << outcomes[r].summary;
  }
  const ExecResult& result = outcomes[0].result;
  CudaBackend single(parse_device_set("cuda:0", 1), CudaOptions{});
  const ReferenceResult reference =
      run_reference(single.device(0), options.model, options.optimizer, problem.microbatches,
                    options.steps, options.inject_nonfinite, problem.stages());
  EXPECT_EQ(max_abs_difference(result.weights, reference.weights), 0.0) << outcomes[0].summary;
  ASSERT_EQ(result.steps.size(), reference.steps.size());
  for (std::size_t k = 0; k < result.steps.size(); ++k) {
    EXPECT_EQ(result.steps[k].loss, reference.steps[k].loss) << "step " << k;
  }
  std::size_t actions = 0;
  for (const auto& list : schedule.devices) actions += list.size();
  for (const auto& trace : result.traces) EXPECT_EQ(trace.spans.size(), actions);
}

// One rank runs anywhere with a GPU; two and four ranks need as many GPUs; interleaved placements
// put several channels on one device pair and join ranks 0 and p-1.
std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = fmt::format("{}_p{}_v{}", info.param.generator, info.param.p, info.param.chunks);
  for (char& ch : name) {
    if (ch == '-') ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Schedules, CudaRanks,
                         ::testing::Values(Case{"1f1b", 1, 4, 1}, Case{"zb-h1", 2, 5, 1},
                                           Case{"1f1b-i", 2, 4, 2}, Case{"1f1b-i", 4, 8, 2},
                                           Case{"zb-h2", 4, 8, 1}),
                         case_name);

}  // namespace
}  // namespace zb::exec::cuda
