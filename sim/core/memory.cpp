// Memory deltas per pass and the over-limit judgement (see memory.h).
#include "sim/core/memory.h"

#include <fmt/format.h>

namespace zb {

MemoryDelta memory_delta(const Problem& problem, Pass pass, int stage) {
  const auto s = static_cast<std::size_t>(stage);
  switch (pass) {
    case Pass::F: return {problem.mem_f[s], 0};
    case Pass::B: return {0, problem.mem_b[s]};
    case Pass::W: return {0, problem.mem_w[s]};
    case Pass::BW: return {0, problem.mem_b[s] + problem.mem_w[s]};
    case Pass::O: return {0, -problem.offload_memory(stage)};
    case Pass::L: return {problem.offload_memory(stage), 0};
  }
  return {};
}

std::string OverLimit::reason() const {
  std::string text = fmt::format("d{} peaks at {:g} > limit {:g}", device, peak, limit);
  if (!notation.empty()) text += fmt::format(" ({})", notation);
  return text;
}

std::optional<OverLimit> first_over_limit(const Problem& problem, const std::vector<double>& peaks) {
  const auto limit = problem.memory_limit();
  if (!limit) return std::nullopt;
  auto over = first_over_limit(peaks, *limit);
  if (over && problem.mem_limit->times_p) over->notation = problem.mem_limit->to_string();
  return over;
}

std::optional<OverLimit> first_over_limit(const std::vector<double>& peaks, double limit) {
  for (std::size_t d = 0; d < peaks.size(); ++d) {
    if (!fits_limit(peaks[d], limit)) return OverLimit{static_cast<int>(d), peaks[d], limit, {}};
  }
  return std::nullopt;
}

}  // namespace zb
