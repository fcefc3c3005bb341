// Per-stage median pass durations of measured traces (see measured_costs.h).
#include "sim/core/measured_costs.h"

#include <map>

#include "sim/support/median.h"
#include "sim/support/time_units.h"

namespace zb {

namespace {

double summary(const std::vector<double>& values, CostStatistic statistic) {
  if (statistic == CostStatistic::median) return median(values);
  double sum = 0;
  for (const double value : values) sum += value;
  return sum / static_cast<double>(values.size());
}

}  // namespace

std::optional<MeasuredCosts> measured_costs(const std::vector<const Trace*>& traces, CostStatistic statistic) {
  std::map<int, std::map<Pass, std::vector<double>>> durations;  // stage -> pass -> ms
  for (const Trace* trace : traces) {
    const double to_ms = seconds_per(trace->meta.time_unit) * 1e3;
    for (const Span& span : trace->spans) {
      if (span.stream == Stream::compute) durations[span.stage][span.pass].push_back(span.duration() * to_ms);
    }
  }
  if (durations.empty() || durations.rbegin()->first + 1 != static_cast<int>(durations.size())) return std::nullopt;
  MeasuredCosts costs;
  costs.split_backward = durations.begin()->second.count(Pass::B) > 0;
  const std::vector<Pass> passes = costs.split_backward ? std::vector<Pass>{Pass::F, Pass::B, Pass::W}
                                                        : std::vector<Pass>{Pass::F, Pass::BW};
  for (const auto& [stage, of_stage] : durations) {
    if (of_stage.size() != passes.size()) return std::nullopt;  // a stage with other passes
    for (const Pass pass : passes) {
      if (of_stage.count(pass) == 0) return std::nullopt;
    }
    costs.t_f.push_back(summary(of_stage.at(Pass::F), statistic));
    costs.t_b.push_back(summary(of_stage.at(costs.split_backward ? Pass::B : Pass::BW), statistic));
    costs.t_w.push_back(costs.split_backward ? summary(of_stage.at(Pass::W), statistic) : 0.0);
  }
  return costs;
}

}  // namespace zb
