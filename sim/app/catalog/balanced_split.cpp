// Layer partitioning's candidates judged by the evaluator.
#include "sim/app/catalog/balanced_split.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "models/cost_model.h"
#include "models/model_setup.h"
#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/detail/in_flight.h"
#include "sim/app/catalog/model_costs.h"
#include "sim/support/error.h"

namespace zb::catalog {

namespace {

double step_time_of(const ResultRow& row) {
  if (const auto step_time = row_extra(row, "step_time")) return *step_time;
  return row.has_metrics ? row.metrics.span : 0;
}

}  // namespace

bool has_balanced_split(const Scenario& scenario) {
  return scenario.model_driven() && scenario.model->split.kind == models::Split::Kind::balanced;
}

Scenario scenario_with_split(const Scenario& scenario, const nlohmann::json& split, const ProblemSpec& shape) {
  Scenario out = scenario;
  out.model->split = models::split_from_json(split, scenario.source);
  out.spec = shape;
  derive_model_costs(out);
  return out;
}

SplitChoice choose_split(const Scenario& scenario, const std::string& schedule, const EngineOptions& engine) {
  if (!scenario.model_driven()) {
    throw InputError(fmt::format("{}: layer partitioning needs a model-driven scenario (fields model and hardware)",
                                 scenario.source));
  }
  const GeneratorInfo& info = generators().get(schedule);
  const ProblemSpec shape = spec_shaped_for_generator(scenario.spec, info);
  const models::ModelSetup& setup = *scenario.model;
  SplitChoice choice;
  // The schedule's order on a fixed split tells what each stage holds at its peaks.
  std::vector<std::vector<models::InFlight>> in_flight;
  std::string first_error;
  for (const char* reference : {"even", "paper"}) {
    try {
      const NamedSchedule named = generate_named(schedule, scenario_with_split(scenario, reference, shape));
      choice.shape = named.problem;
      in_flight = in_flight_per_stage(named.problem, named.schedule);
      break;
    } catch (const InputError& e) {  // ScheduleError too: the generator cannot build this split
      if (first_error.empty()) first_error = e.what();
    }
  }
  if (in_flight.empty()) {
    throw InputError(fmt::format("{}: {} cannot be built on the even or the paper split to measure what it holds: {}",
                                 scenario.source, schedule, first_error));
  }
  choice.pieces = models::model_pieces(setup);
  choice.request = models::partition_request(setup, pipeline_shape(choice.shape), std::move(in_flight));
  const std::vector<models::Partition> candidates = models::partition_candidates(choice.pieces, choice.request);
  if (candidates.empty()) choice.no_fit = models::no_fit_reason(choice.pieces, choice.request);
  std::vector<std::pair<std::string, nlohmann::json>> splits;
  for (const models::Partition& candidate : candidates) {
    splits.emplace_back(fmt::format("balanced {}", models::objective_name(candidate.objective)), candidate.layers);
  }
  splits.emplace_back("even", "even");
  splits.emplace_back("paper", "paper");
  for (const auto& [label, split] : splits) {
    SplitTrial trial;
    trial.label = label;
    try {
      const Scenario tried = scenario_with_split(scenario, split, shape);
      trial.layers = models::stage_costs(*tried.model, pipeline_shape(choice.shape), tried.source).layers;
      trial.row = run_generator_row(schedule, tried, engine, nullptr);
    } catch (const InputError& e) {  // the shape cannot take this split (more stages than layers)
      trial.row.schedule = schedule;
      trial.row.status = "unsupported";
      trial.row.reason = e.what();
    }
    trial.step_time = step_time_of(trial.row);
    choice.trials.push_back(std::move(trial));
  }
  for (int t = 0; t < static_cast<int>(choice.trials.size()); ++t) {
    const SplitTrial& trial = choice.trials[t];
    if (trial.row.status != "ok") continue;
    if (choice.chosen < 0 || trial.step_time < choice.trials[choice.chosen].step_time) choice.chosen = t;
  }
  if (choice.chosen < 0 && choice.no_fit.empty()) {
    choice.no_fit = fmt::format("every split tried runs {} over the memory limit ({})", schedule,
                                choice.trials.front().row.reason);
  }
  return choice;
}

std::optional<Scenario> resolve_balanced_split(const Scenario& scenario, const std::string& schedule,
                                               std::string& reason) {
  const SplitChoice choice = choose_split(scenario, schedule, EngineOptions{});
  if (choice.chosen < 0) {
    reason = fmt::format("split balanced: {}", choice.no_fit);
    return std::nullopt;
  }
  const ProblemSpec shape = spec_shaped_for_generator(scenario.spec, generators().get(schedule));
  return scenario_with_split(scenario, choice.trials[choice.chosen].layers, shape);
}

}  // namespace zb::catalog
