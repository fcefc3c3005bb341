// list_timing is the solver's fast copy of the evaluator's timing rule: pinned to the evaluator
// over many random orders, costs and transfer times (every end time and every stage span).
#include <gtest/gtest.h>

#include <random>

#include "sim/core/evaluator.h"
#include "sim/solver/detail/list_timing.h"
#include "sim/solver/detail/split_pass.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

// A random deadlock-free order: repeatedly a random device takes a random one of its actions
// whose inputs are already placed (F after the F above, B after the B below or the own F on the
// last stage, W after its B), so every device's list respects what the timing rule needs.
Schedule random_order(const Problem& problem, std::mt19937& random) {
  const int p = problem.devices;
  const int m = problem.microbatches;
  // placed[s][pass][i]
  std::vector<std::vector<std::vector<bool>>> placed(p, std::vector<std::vector<bool>>(3, std::vector<bool>(m, false)));
  Schedule schedule;
  schedule.devices.resize(p);
  auto ready = [&](int s, int pass, int i) -> bool {
    if (placed[s][pass][i]) return false;
    if (pass == 0) return s == 0 || placed[s - 1][0][i];
    if (pass == 1) return placed[s][0][i] && (s == p - 1 || placed[s + 1][1][i]);
    return placed[s][1][i];
  };
  int left = 3 * p * m;
  while (left > 0) {
    std::vector<std::tuple<int, int, int>> choices;
    for (int s = 0; s < p; ++s) {
      for (int pass = 0; pass < 3; ++pass) {
        for (int i = 0; i < m; ++i) {
          if (ready(s, pass, i)) choices.emplace_back(s, pass, i);
        }
      }
    }
    const auto [s, pass, i] = choices[std::uniform_int_distribution<std::size_t>(0, choices.size() - 1)(random)];
    placed[s][pass][i] = true;
    schedule.devices[s].push_back({pass == 0 ? Pass::F : pass == 1 ? Pass::B : Pass::W, i, 0});
    --left;
  }
  return schedule;
}

TEST(ListTiming, EqualsTheEvaluatorOverRandomOrdersCostsAndTransfers) {
  std::mt19937 random(20261201);
  std::uniform_real_distribution<double> cost(0.1, 3.0);
  int cases = 0;
  for (int round = 0; round < 400; ++round) {
    const int p = std::uniform_int_distribution<int>(1, 6)(random);
    const int m = std::uniform_int_distribution<int>(1, 8)(random);
    ProblemSpec spec = testing::uniform_spec(p, m);
    spec.t_f.clear();
    spec.t_b.clear();
    spec.t_w.clear();
    for (int s = 0; s < p; ++s) {
      spec.t_f.push_back(cost(random));
      spec.t_b.push_back(cost(random));
      spec.t_w.push_back(cost(random));
    }
    spec.t_comm = {round % 3 == 0 ? 0.0 : cost(random) / 4};
    const Problem problem = spec.build();
    const Schedule order = random_order(problem, random);
    const ListTiming timing = list_timing(problem, order);
    const Trace trace = evaluate(problem, order);
    for (const Span& span : trace.spans) {
      if (span.stream != Stream::compute) continue;
      const int pass = split_index(span.pass);
      ASSERT_NEAR(timing.end[span.stage][pass][span.microbatch], span.end, 1e-9 * (1 + span.end))
          << "round " << round << " p=" << p << " m=" << m;
    }
    for (int s = 0; s < p; ++s) ASSERT_NEAR(timing.stage_span[s], trace.metrics.device_span[s], 1e-9) << round;
    ASSERT_NEAR(timing.span, trace.metrics.span, 1e-9) << round;
    ++cases;
  }
  EXPECT_EQ(cases, 400);
}

}  // namespace
}  // namespace zb
