// Shared helpers of the solver tests: problems in the memory units, seeded random problems.
#pragma once

#include <gtest/gtest.h>

#include <random>

#include "sim/core/problem_spec.h"
#include "sim/core/schedule.h"
#include "tests/testing/problems.h"

namespace zb::test {

// The reference implementation's units: mem_f = 2, mem_b = -1, mem_w = -1 per device.
inline Problem make_problem(int p, int m, double tf, double tb, double tw, double tcomm = 0,
                            std::optional<double> limit = std::nullopt) {
  ProblemSpec spec = zb::testing::uniform_spec(p, m, tf, tb, tw, tcomm);
  spec.mem_f = {2};
  spec.mem_b = {-1};
  spec.mem_w = {-1};
  if (limit) spec.mem_limit = MemoryLimit{*limit, false};
  return spec.build("test");
}

// Random per-stage integer costs in [1, 6], t_comm in {0, 1}, given limit in multiples of p*mem_f.
inline Problem random_problem(std::mt19937& rng, int p, int m, double limit_times_p) {
  std::uniform_int_distribution<int> cost(1, 6);
  std::uniform_int_distribution<int> comm(0, 1);
  ProblemSpec spec;
  spec.devices = p;
  spec.microbatches = m;
  for (int s = 0; s < p; ++s) {
    spec.t_f.push_back(cost(rng));
    spec.t_b.push_back(cost(rng));
    spec.t_w.push_back(cost(rng));
  }
  spec.t_comm = {static_cast<double>(comm(rng))};
  spec.mem_f = {2};
  spec.mem_b = {-1};
  spec.mem_w = {-1};
  spec.mem_limit = MemoryLimit{limit_times_p, true};
  return spec.build("random");
}

// `count` seeded random problems (p = 2..5, m = 2p..2p+2, limits 1p..2p), each passed with its
// absolute limit to `check` under a trace that names it.
template <class Check>
void for_random_problems(unsigned seed, int count, Check check) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < count; ++trial) {
    const int p = 2 + trial % 4, m = 2 * p + trial % 3;
    const Problem problem = random_problem(rng, p, m, 1.0 + 0.25 * (trial % 5));
    const double limit = *problem.memory_limit();
    SCOPED_TRACE(::testing::Message() << "trial " << trial << " p=" << p << " m=" << m << " limit " << limit);
    check(problem, limit);
  }
}

// Every (microbatch, pass) exactly once per stage, F before B before W, each kind in microbatch order.
inline void expect_complete_in_order(const Problem& problem, const Schedule& schedule) {
  for (const auto& list : schedule.devices) {
    ASSERT_EQ(list.size(), static_cast<std::size_t>(3 * problem.microbatches));
    int next[3] = {0, 0, 0};
    for (const Action& action : list) {
      const int kind = action.pass == Pass::F ? 0 : action.pass == Pass::B ? 1 : 2;
      EXPECT_EQ(action.microbatch, next[kind]);
      ++next[kind];
      if (kind > 0) {
        EXPECT_LE(next[kind], next[kind - 1]);
      }
    }
  }
}

}  // namespace zb::test
