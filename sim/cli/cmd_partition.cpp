// zbsim partition: the layer split that runs a schedule fastest within device memory, against the
// even and paper splits, with its per-stage load and the torchtitan and Megatron-LM settings.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "models/partition_export.h"
#include "models/static_memory.h"
#include "sim/app/catalog/balanced_split.h"
#include "sim/app/catalog/single_run.h"
#include "sim/app/catalog/generators.h"
#include "sim/cli/commands.h"
#include "sim/cli/common/problem_options.h"
#include "sim/app/catalog/result_table.h"
#include "sim/support/error.h"

namespace zb::cli {

namespace po = boost::program_options;

namespace {

// "" when the placement has no Megatron layout (Megatron puts virtual stage i on rank i mod p).
std::string megatron_or_empty(const std::vector<int>& layers, Placement placement) {
  if (placement == Placement::vshape || placement == Placement::bidirectional) return "";
  return models::megatron_layout(layers);
}

std::string layers_text(const std::vector<int>& layers) {
  std::string text;
  for (std::size_t s = 0; s < layers.size(); ++s) text += fmt::format("{}{}", s ? ";" : "", layers[s]);
  return text.empty() ? "-" : text;
}

nlohmann::json choice_json(const catalog::SplitChoice& choice, const std::string& schedule) {
  nlohmann::json out;
  out["schedule"] = schedule;
  out["p"] = choice.shape.devices;
  out["chunks"] = choice.shape.chunks;
  out["placement"] = placement_name(choice.shape.placement);
  out["trials"] = nlohmann::json::array();
  for (const catalog::SplitTrial& trial : choice.trials) {
    nlohmann::json row{{"split", trial.label}, {"layers", trial.layers}, {"status", trial.row.status},
                       {"step_time", trial.step_time}};
    if (!trial.row.reason.empty()) row["reason"] = trial.row.reason;
    out["trials"].push_back(row);
  }
  if (choice.chosen < 0) {
    out["chosen"] = nullptr;
    out["no_fit"] = choice.no_fit;
    return out;
  }
  const catalog::SplitTrial& best = choice.trials[choice.chosen];
  out["chosen"] = best.label;
  out["layers"] = best.layers;
  out["stages"] = nlohmann::json::array();
  const auto loads = models::stage_loads(choice.pieces, choice.request, best.layers);
  for (std::size_t s = 0; s < loads.size(); ++s) {
    out["stages"].push_back({{"stage", s},
                             {"device", choice.request.device_of_stage[s]},
                             {"layers", best.layers[s]},
                             {"t_f_ms", loads[s].t_f_ms},
                             {"t_b_ms", loads[s].t_b_ms},
                             {"t_w_ms", loads[s].t_w_ms},
                             {"memory_GB", loads[s].memory_GB}});
  }
  out["torchtitan_module_fqns_per_model_part"] = nlohmann::json::parse(models::torchtitan_module_fqns(best.layers));
  const std::string megatron = megatron_or_empty(best.layers, choice.shape.placement);
  out["megatron_pipeline_model_parallel_layout"] = megatron.empty() ? nlohmann::json(nullptr) : nlohmann::json(megatron);
  return out;
}

std::string choice_table(const catalog::SplitChoice& choice, const std::string& schedule, int steps) {
  std::string text = fmt::format("{} at p={}, {} chunk(s) per device ({}), m={}; steady-state step time over {} steps\n\n",
                                 schedule, choice.shape.devices, choice.shape.chunks,
                                 placement_name(choice.shape.placement), choice.shape.microbatches, steps);
  double even_time = 0;
  for (const catalog::SplitTrial& trial : choice.trials) {
    if (trial.label == "even" && trial.row.has_metrics) even_time = trial.step_time;
  }
  text += fmt::format("{:<17} {:>14} {:>9}  {:<11} {}\n", "split", "step time (ms)", "vs even", "status", "layers per stage");
  for (int t = 0; t < static_cast<int>(choice.trials.size()); ++t) {
    const catalog::SplitTrial& trial = choice.trials[t];
    const std::string time = trial.row.has_metrics ? fmt::format("{:.3f}", trial.step_time) : "-";
    const std::string versus = trial.row.has_metrics && even_time > 0
                                   ? fmt::format("{:+.2f}%", 100.0 * (trial.step_time / even_time - 1))
                                   : "-";
    text += fmt::format("{:<17} {:>14} {:>9}  {:<11} {}{}\n", trial.label + (t == choice.chosen ? " *" : ""), time,
                        versus, trial.row.status, layers_text(trial.layers),
                        trial.row.reason.empty() ? "" : "  (" + trial.row.reason + ")");
  }
  if (choice.chosen < 0) return text;
  const catalog::SplitTrial& best = choice.trials[choice.chosen];
  text += fmt::format("\nchosen (*): {}\n\n", best.label);
  text += fmt::format("{:>5} {:>6} {:>6} {:>10} {:>10} {:>10} {:>13}\n", "stage", "device", "layers", "F (ms)", "B (ms)",
                      "W (ms)", "memory (GB)");
  const auto loads = models::stage_loads(choice.pieces, choice.request, best.layers);
  for (std::size_t s = 0; s < loads.size(); ++s) {
    text += fmt::format("{:>5} {:>6} {:>6} {:>10.3f} {:>10.3f} {:>10.3f} {:>13.2f}\n", s,
                        choice.request.device_of_stage[s], best.layers[s], loads[s].t_f_ms, loads[s].t_b_ms,
                        loads[s].t_w_ms, loads[s].memory_GB);
  }
  text += fmt::format("memory: static plus the activations the schedule's order holds at its peaks, against {:.2f} GB "
                      "per device\n\n",
                      choice.request.budget_GB);
  text += fmt::format("torchtitan ([parallelism] in the job TOML):\n  module_fqns_per_model_part = {}\n",
                      models::torchtitan_module_fqns(best.layers));
  const std::string megatron = megatron_or_empty(best.layers, choice.shape.placement);
  text += megatron.empty()
              ? fmt::format("Megatron-LM: no layout (it places virtual stage i on rank i mod p, not {})\n",
                            placement_name(choice.shape.placement))
              : fmt::format("Megatron-LM:\n  --pipeline-model-parallel-size {} --pipeline-model-parallel-layout \"{}\"\n",
                            choice.shape.devices, megatron);
  return text;
}

}  // namespace

int run_partition(int argc, char** argv) {
  po::options_description options = problem_options();
  po::options_description own("Partition");
  own.add_options()
      ("schedule", po::value<std::string>(),
       catalog::schedule_option_help().c_str())
      ("format", po::value<std::string>()->default_value("table"), "table | json");
  options.add(own);
  options.add(step_options());
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim partition --scenario FILE [problem flags] [--schedule NAME] [--steps N]\n"
                          "       [--format table|json]\n"
                          "  The layers per stage (embedding on the first, output layer on the last) that run the\n"
                          "  schedule fastest within device memory: a dynamic program's candidates, even and paper,\n"
                          "  each through the evaluator's steady state; prints the per-stage load and the torchtitan\n"
                          "  and Megatron-LM settings. A scenario's \"split\": \"balanced\" makes the same choice.",
                          "  zbsim partition --scenario scenarios/models/llama2-70b-a100-p32-m64.json --schedule zb-h1")) {
    return 0;
  }
  const Scenario scenario = scenario_from_options(values);
  const Format format = parse_format(values["format"].as<std::string>());
  if (format == Format::csv) throw InputError("--format: zbsim partition writes table or json, not csv");
  catalog::EngineOptions engine;
  apply_step_options(values, engine);
  check_engine_options(engine);
  const std::string schedule = catalog::chosen_schedule(
      scenario, values.count("schedule") ? std::optional(values["schedule"].as<std::string>()) : std::nullopt);
  const catalog::SplitChoice choice = catalog::choose_split(scenario, schedule, engine);
  std::cout << (format == Format::json ? choice_json(choice, schedule).dump(2) + "\n"
                                       : choice_table(choice, schedule, engine.steps));
  if (choice.chosen < 0) {
    std::cerr << "zbsim partition: no split fits: " << choice.no_fit << "\n";
    return 2;
  }
  return 0;
}

}  // namespace zb::cli
