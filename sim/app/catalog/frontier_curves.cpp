// The memory frontier at several placements.
#include "sim/app/catalog/frontier_curves.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/app/catalog/run_row.h"
#include "sim/support/error.h"

namespace zb::catalog {

namespace {

nlohmann::json point_json(const FrontierPoint& point) {
  nlohmann::json item = {{"limit_times_p", point.limit_times_p}, {"limit", point.limit}};
  item["zb-auto"] = point.auto_feasible ? nlohmann::json{{"status", "ok"},
                                                         {"span", point.auto_span},
                                                         {"bubble_rate", point.auto_bubble_rate},
                                                         {"peak_memory", point.auto_peak_memory}}
                                        : nlohmann::json{{"status", "infeasible"}};
  if (point.ilp) {
    const IlpResult& r = *point.ilp;
    item["zb-ilp"] = r.status == IlpStatus::infeasible
                         ? nlohmann::json{{"status", "infeasible"}, {"reason", r.message}}
                         : nlohmann::json{{"status", ilp_status_name(r.status)},
                                          {"span", r.span},
                                          {"bubble_rate", point.ilp_bubble_rate},
                                          {"best_bound", r.best_bound},
                                          {"gap", r.gap},
                                          {"solve_seconds", r.solve_seconds}};
  }
  return item;
}

// The spec at a placement's natural chunk count.
ProblemSpec spec_at(const ProblemSpec& spec, Placement placement) {
  const int chunks = placement == Placement::linear   ? 1
                     : placement == Placement::vshape ? 2
                                                      : std::max(2, spec.chunks);
  std::string reason;
  std::optional<ProblemSpec> adjusted = spec_at_chunks(spec, chunks, reason);
  if (!adjusted) throw InputError(fmt::format("--placements {}: {}", placement_name(placement), reason));
  adjusted->placement = placement;
  return *adjusted;
}

// nan and inf are never limits, steps or time limits (nan would pass the comparisons below).
void check_frontier_options(const FrontierOptions& options) {
  if (!std::isfinite(options.from_times_p) || !std::isfinite(options.to_times_p) ||
      !std::isfinite(options.step_times_p)) {
    throw InputError(fmt::format("--from {:g} --to {:g} --step {:g}: need finite numbers", options.from_times_p,
                                 options.to_times_p, options.step_times_p));
  }
  if (!(options.from_times_p > 0) || !(options.step_times_p > 0) || options.to_times_p < options.from_times_p) {
    throw InputError(fmt::format("--from {:g} --to {:g} --step {:g}: need from > 0, step > 0 and to >= from",
                                 options.from_times_p, options.to_times_p, options.step_times_p));
  }
  if (!std::isfinite(options.ilp_time_limit_s) || (options.with_ilp && !(options.ilp_time_limit_s > 0))) {
    throw InputError(fmt::format("--time-limit: {} is not a positive number of seconds", options.ilp_time_limit_s));
  }
}

std::vector<Placement> placements_to_draw(const ProblemSpec& spec, const std::optional<std::vector<std::string>>& chosen) {
  if (chosen) {
    std::vector<Placement> placements;
    for (const std::string& name : *chosen) placements.push_back(parse_placement(name, "--placements"));
    if (placements.empty()) throw InputError("--placements: name at least one of linear, interleaved, vshape");
    return placements;
  }
  if (spec.placement || spec.chunks != 1 || !spec.chunk_independent()) {
    return {spec.resolved_placement()};
  }
  return {Placement::linear, Placement::vshape};
}

}  // namespace

std::vector<FrontierCurve> frontier_curves(const ProblemSpec& spec, std::string_view source,
                                           const std::optional<std::vector<std::string>>& chosen,
                                           const FrontierOptions& options) {
  check_frontier_options(options);
  std::vector<std::pair<Placement, Problem>> problems;
  for (Placement placement : placements_to_draw(spec, chosen)) problems.emplace_back(placement, spec_at(spec, placement).build(source));
  std::vector<FrontierCurve> curves;
  for (const auto& [placement, problem] : problems) {
    curves.push_back({placement, problem.chunks, memory_frontier(problem, options)});
  }
  return curves;
}

nlohmann::json frontier_json(const ProblemSpec& spec, const std::vector<FrontierCurve>& curves) {
  nlohmann::json items = nlohmann::json::array();
  for (const FrontierCurve& curve : curves) {
    nlohmann::json rows = nlohmann::json::array();
    for (const FrontierPoint& point : curve.points) rows.push_back(point_json(point));
    items.push_back({{"placement", placement_name(curve.placement)}, {"chunks", curve.chunks}, {"frontier", rows}});
  }
  return {{"problem", to_json(spec)}, {"curves", std::move(items)}};
}

}  // namespace zb::catalog
