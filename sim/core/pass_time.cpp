// Pass durations and the overlapped block (see pass_time.h).
#include "sim/core/pass_time.h"

#include <algorithm>

namespace zb {

namespace {

double compute_time(const Problem& problem, Pass pass, int stage) {
  const auto s = static_cast<std::size_t>(stage);
  switch (pass) {
    case Pass::F: return problem.t_f[s];
    case Pass::B: return problem.t_b[s];
    case Pass::W: return problem.t_w[s];
    case Pass::BW: return problem.t_bw[s];
    case Pass::O:
    case Pass::L: return 0;  // copies, not compute
  }
  return 0;
}

double a2a_time(const Problem& problem, Pass pass, int stage) {
  if (problem.t_a2a.empty() || pass == Pass::W || is_copy(pass)) return 0;
  return problem.t_a2a[static_cast<std::size_t>(stage)];
}

// What one part's all-to-all adds to an overlapped block: the share the pair may not hide, plus
// the hidden share's price. Hidden under the partner's compute c, the all-to-all takes
// comm_sm_share of the SMs while it runs, so c slows to c / (1 - share) meanwhile: an all-to-all
// of H that ends within it costs share * H; a longer one covers all of c and costs H - c.
double exposed_a2a(const Problem& problem, double a2a, double partner_compute) {
  const double hidden = problem.a2a_overlap * a2a;
  const double share = problem.comm_sm_share;
  const double price = hidden * (1 - share) <= partner_compute ? share * hidden : hidden - partner_compute;
  return (a2a - hidden) + price;
}

}  // namespace

double pass_time(const Problem& problem, Pass pass, int stage) {
  if (is_copy(pass)) return problem.t_offload.empty() ? 0.0 : problem.t_offload[static_cast<std::size_t>(stage)];
  return compute_time(problem, pass, stage) + a2a_time(problem, pass, stage);
}

Problem with_all_to_all_in_compute(const Problem& problem) {
  Problem planned = problem;
  if (problem.t_a2a.empty()) return planned;
  for (std::size_t s = 0; s < problem.t_a2a.size(); ++s) {
    planned.t_f[s] += problem.t_a2a[s];
    planned.t_b[s] += problem.t_a2a[s];
    planned.t_bw[s] += problem.t_a2a[s];
  }
  planned.t_a2a.clear();
  return planned;
}

BlockTimes overlapped_times(const Problem& problem, Pass first, int first_stage, Pass second, int second_stage) {
  const double c1 = compute_time(problem, first, first_stage);
  const double c2 = compute_time(problem, second, second_stage);
  const double total = c1 + c2 - problem.overlap * std::min(c1, c2) +
                       exposed_a2a(problem, a2a_time(problem, first, first_stage), c2) +
                       exposed_a2a(problem, a2a_time(problem, second, second_stage), c1);
  const double alone1 = pass_time(problem, first, first_stage);
  const double alone = alone1 + pass_time(problem, second, second_stage);
  const double share = alone > 0 ? total * alone1 / alone : 0.0;
  return {share, total - share};
}

double compute_work(const Problem& problem, const Schedule& schedule) {
  // Nothing runs concurrently, so the pairs save nothing (each saving would be 0 * min(c1, c2)).
  if (problem.overlap == 0) return problem.work();
  double most = 0;
  std::vector<int> stage_of(static_cast<std::size_t>(problem.chunks));  // of the device, per chunk
  for (int d = 0; d < schedule.device_count(); ++d) {
    for (int c = 0; c < problem.chunks; ++c) stage_of[static_cast<std::size_t>(c)] = problem.stage_of(d, c);
    const auto& actions = schedule.devices[static_cast<std::size_t>(d)];
    double saved = 0;  // what the device's overlapped pairs save on running their parts one by one
    for (std::size_t i = 0; i + 1 < actions.size(); ++i) {
      if (!actions[i].overlap_next) continue;
      const double c1 = compute_time(problem, actions[i].pass, stage_of[static_cast<std::size_t>(actions[i].chunk)]);
      const double c2 =
          compute_time(problem, actions[i + 1].pass, stage_of[static_cast<std::size_t>(actions[i + 1].chunk)]);
      saved += problem.overlap * std::min(c1, c2);
      ++i;
    }
    most = std::max(most, problem.device_work(d) - saved);
  }
  return most;
}

}  // namespace zb
