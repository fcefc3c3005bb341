// Samples, tokens, MFU and memory of a model-driven row.
#include "sim/app/catalog/detail/throughput_extras.h"

#include <algorithm>
#include <optional>
#include <string>

#include "models/throughput.h"
#include "sim/app/catalog/model_costs.h"

namespace zb::catalog {

void add_throughput_extras(const Scenario& scenario, const Problem& problem, ResultRow& row) {
  if (!scenario.model_driven() || !row.has_metrics) return;
  const double unit = seconds_per(problem.time_unit);
  if (!(unit > 0)) return;
  const models::StepWork work = models::step_work(*scenario.model, pipeline_shape(problem), scenario.source);
  struct Figures {
    std::string suffix;
    models::Throughput value;
  };
  std::vector<Figures> modes;
  for (const std::string suffix : {"", "_sync", "_post_validation"}) {
    if (const auto step_time = row_extra(row, "step_time" + suffix)) {
      modes.push_back({suffix, models::throughput(work, *step_time * unit)});
    }
  }
  for (const auto& [suffix, value] : modes) row.extras.emplace_back("samples_per_s_per_gpu" + suffix, value.samples_per_s_per_gpu);
  for (const auto& [suffix, value] : modes) row.extras.emplace_back("tokens_per_s" + suffix, value.tokens_per_s);
  for (const auto& [suffix, value] : modes) row.extras.emplace_back("mfu" + suffix, value.mfu);
  const bool memory_by_hand = scenario.explicit_fields.contains("mem_f") || scenario.explicit_fields.contains("mem_b") ||
                              scenario.explicit_fields.contains("mem_w");
  if (memory_by_hand) return;
  row.memory_per_device_GB.clear();
  for (std::size_t d = 0; d < work.static_GB.size() && d < row.metrics.peak_memory.size(); ++d) {
    row.memory_per_device_GB.push_back(work.static_GB[d] + row.metrics.peak_memory[d]);
  }
  const auto& per_device = row.memory_per_device_GB;
  row.extras.emplace_back("memory_GB", per_device.empty() ? 0.0 : *std::max_element(per_device.begin(), per_device.end()));
}

}  // namespace zb::catalog
