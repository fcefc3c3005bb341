// The in-flight moments of a schedule per stage (see in_flight.h).
#include "sim/app/catalog/detail/in_flight.h"

#include <algorithm>

namespace zb::catalog {

using models::InFlight;

std::vector<std::vector<InFlight>> in_flight_per_stage(const Problem& problem, const Schedule& schedule) {
  std::vector<std::vector<InFlight>> moments(problem.stages());
  std::vector<InFlight> now(problem.stages());
  for (int d = 0; d < schedule.device_count(); ++d) {
    for (const Action& action : schedule.devices[d]) {
      const int stage = problem.stage_of(d, action.chunk);
      InFlight& held = now[stage];
      switch (action.pass) {
        case Pass::F: ++held.forwards; break;
        case Pass::B: --held.forwards, ++held.backwards; break;
        case Pass::W: --held.backwards; break;
        case Pass::BW: --held.forwards; break;
        case Pass::O:  // copies move activations, not microbatches: the in-flight counts stay
        case Pass::L: break;
      }
      // Every stage of this device may peak now (its device's total is what the limit judges).
      for (int c = 0; c < problem.chunks; ++c) {
        const int s = problem.stage_of(d, c);
        moments[s].push_back(now[s]);
      }
    }
  }
  for (auto& list : moments) {
    std::sort(list.begin(), list.end(), [](const InFlight& a, const InFlight& b) {
      return a.forwards != b.forwards ? a.forwards > b.forwards : a.backwards > b.backwards;
    });
    // Keep the pairs no other pair dominates: by falling forwards, strictly rising backwards.
    std::vector<InFlight> frontier;
    for (const InFlight& moment : list) {
      if (frontier.empty() || moment.backwards > frontier.back().backwards) frontier.push_back(moment);
    }
    list = std::move(frontier);
  }
  return moments;
}

}  // namespace zb::catalog
