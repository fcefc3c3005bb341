// GPipe: every forward, then every fused backward.
#include "sim/core/generators/generators.h"

namespace zb {

Schedule make_gpipe(const Problem& problem) {
  Schedule schedule = Schedule::empty("gpipe", problem.devices);
  for (auto& actions : schedule.devices) {
    for (int mb = 0; mb < problem.microbatches; ++mb) actions.push_back({Pass::F, mb, 0});
    for (int mb = 0; mb < problem.microbatches; ++mb) actions.push_back({Pass::BW, mb, 0});
  }
  return schedule;
}

}  // namespace zb
