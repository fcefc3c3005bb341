// recommend's step-time bound (sim/app/plan/detail/step_bound.h): its closed form on unit costs, and no
// generator's ok row below it on problems where the ramp, the memory limit, transfers, unequal
// stages, the optimizer update and every placement play a part.
#include <gtest/gtest.h>

#include "sim/app/catalog/engines.h"
#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/run_row.h"
#include "sim/app/plan/detail/step_bound.h"
#include "sim/support/error.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

double step_time(const catalog::ResultRow& row) {
  for (const auto& [name, value] : row.extras) {
    if (name == "step_time") return value;
  }
  return 0;
}

// p = 4, m = 4, unit costs: each device computes 12; device 0's first B waits for 4 forwards and 3
// backwards (7), of which its 4 forwards fill 4, so it idles 3. A limit of 2 (M_B = 1) leaves room
// for 2 forwards before that B: it idles 5.
TEST(StepBound, UnitCostsClosedForm) {
  ProblemSpec spec = testing::uniform_spec(4, 4);
  plan::StepBound bound = plan::step_time_bound(spec.build());
  EXPECT_DOUBLE_EQ(bound.compute, 12);
  EXPECT_DOUBLE_EQ(bound.bound, 15);
  spec.mem_limit = MemoryLimit{2, false};
  bound = plan::step_time_bound(spec.build());
  EXPECT_NEAR(bound.bound, 17, 1e-6);  // less fits_limit's tolerance
  // Transfers lengthen the chain (6 boundaries crossed, 0.5 each) and the update adds to the device.
  spec.mem_limit.reset();
  spec.t_comm = {0.5};
  spec.t_opt = {2};
  EXPECT_DOUBLE_EQ(plan::step_time_bound(spec.build()).bound, 12 + (10 - 4) + 2);
  // With m = 8 the forwards fill the ramp: the bound is the compute and the update.
  ProblemSpec long_run = testing::uniform_spec(4, 8);
  EXPECT_DOUBLE_EQ(plan::step_time_bound(long_run.build()).bound, 24);
}

TEST(StepBound, NoGeneratorRunsBelowIt) {
  std::vector<ProblemSpec> specs;
  specs.push_back(testing::uniform_spec(4, 4));
  specs.push_back(testing::uniform_spec(4, 6, 1, 2, 1, 0.2));
  ProblemSpec uneven = testing::uniform_spec(4, 8);
  uneven.t_f = {1.3, 1, 1, 0.8};
  uneven.t_b = {2.1, 2, 2, 1.6};
  uneven.t_w = {0.9, 1, 1, 1.4};
  uneven.t_opt = {0.7, 0.2, 0.2, 0.3};
  specs.push_back(uneven);
  ProblemSpec tight = testing::uniform_spec(6, 6, 1, 1, 1, 0.1);
  tight.mem_limit = MemoryLimit{3, false};
  specs.push_back(tight);
  ProblemSpec two_p = testing::uniform_spec(8, 8);
  two_p.mem_limit = MemoryLimit{2, true};
  specs.push_back(two_p);
  specs.push_back(testing::uniform_spec(8, 4, 1, 1.5, 0.5));

  int rows = 0, ramp_rows = 0;
  for (const ProblemSpec& base : specs) {
    for (const std::string& name : catalog::generators().names()) {
      const GeneratorInfo& info = catalog::generators().get(name);
      if (info.long_running) continue;
      for (const int chunks : {2, 4}) {
        if (chunks == 4 && info.chunks != ChunkSupport::multi) continue;
        const Problem problem = testing::generator_spec(info, base, chunks).build();
        catalog::ResultRow row;
        try {
          row = catalog::run_schedule_row(generate(catalog::generators(), name, problem), problem, catalog::EngineOptions{},
                                          nullptr);
        } catch (const Error&) {
          continue;  // the generator cannot build this problem (limit too small, m too short for its shape)
        }
        if (row.status != "ok") continue;
        const plan::StepBound bound = plan::step_time_bound(problem);
        EXPECT_GE(step_time(row), bound.bound * (1 - 1e-12))
            << name << " p=" << problem.devices << " m=" << problem.microbatches << " v=" << problem.chunks;
        ++rows;
        if (bound.bound > bound.compute + 1e-9) ++ramp_rows;
      }
    }
  }
  EXPECT_GT(rows, 60);
  EXPECT_GT(ramp_rows, 20);
}

}  // namespace
}  // namespace zb
