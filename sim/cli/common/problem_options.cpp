// Problem flags, scenario files and command-line parsing shared by the subcommands.
#include "sim/cli/common/problem_options.h"

#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "sim/cli/common/command_line.h"
#include "sim/cli/common/problem_flags.h"
#include "sim/app/catalog/scenario_input.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"

namespace zb::cli {

namespace po = boost::program_options;

po::options_description problem_options() {
  po::options_description options("Problem (a scenario file, flags, or both: flags override the file)");
  options.add_options()("scenario", po::value<std::string>(), "scenario JSON file (see scenarios/)")
      ("cost-model", po::value<std::string>(),
       "model-driven scenarios: calibrated (the default: the hardware preset's efficiencies fitted to measured runs, "
       "zbsim calibrate-model) | roofline (the uncalibrated model)")
      ("offload-chunks", po::value<int>(),
       "offload the activations of each device's first K chunks to host memory in every schedule that does not "
       "offload by itself (all chunks when it has fewer): O after each forward, L before its backward, where the "
       "copies pay; needs --t-offload or a model-driven scenario");
  cli::add_problem_flags(options);
  return options;
}

po::options_description step_options() {
  const catalog::EngineOptions defaults;
  po::options_description options("Steady state (the step_time columns; docs/design.md section 7)");
  options.add_options()
      ("steps", po::value<int>()->default_value(defaults.steps), "consecutive training steps; the step time is (end of step N - end of step 1) / (N - 1)")
      ("rollback-rate", po::value<double>()->default_value(defaults.rollback_rate), "post-validation: the fraction of steps that roll back and redo the update, in [0, 1]");
  return options;
}

void apply_step_options(const po::variables_map& options, catalog::EngineOptions& engine) {
  engine.steps = options["steps"].as<int>();
  engine.rollback_rate = options["rollback-rate"].as<double>();
}

Scenario scenario_from_options(const po::variables_map& options) {
  Scenario scenario;
  scenario.source = "command line";
  if (options.count("scenario")) scenario = load_scenario(options["scenario"].as<std::string>());
  if (options.count("cost-model")) {
    const models::CostModel cost_model = parse_cost_model(options["cost-model"].as<std::string>());
    if (!scenario.model_driven()) {
      throw InputError("--cost-model: the problem has no model to cost (give a model-driven --scenario)");
    }
    scenario.model->hardware.use(cost_model);
    derive_model_costs(scenario);
  }
  if (options.count("offload-chunks")) {
    scenario.offload_chunks = options["offload-chunks"].as<int>();
    if (scenario.offload_chunks < 0 || scenario.offload_chunks > 1024) {
      throw InputError(fmt::format("--offload-chunks {}: expected 0..1024 (chunks per device to offload)",
                                   scenario.offload_chunks));
    }
  }
  return catalog::apply_given_fields(std::move(scenario), cli::given_problem_flags(options));
}

models::CostModel parse_cost_model(const std::string& text) {
  if (const auto cost_model = models::cost_model_from_name(text)) return *cost_model;
  throw InputError(fmt::format("--cost-model: '{}' (expected calibrated or roofline)", excerpt(text)));
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto comma = std::min(text.find(',', start), text.size());
    if (comma > start) items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

bool parse_command_line(int argc, char** argv, const po::options_description& options, po::variables_map& values,
                        const char* usage, const char* example, std::initializer_list<const char*> outputs) {
  po::options_description all = options;
  all.add_options()("help,h", "show this help");
  po::store(po::command_line_parser(argc, argv).options(all).run(), values);
  if (values.count("help")) {
    std::cout << "usage: " << usage << "\n\n" << all << "\nexample:\n" << example << "\n";
    return false;
  }
  po::notify(values);
  cli::refuse_empty_values(values, all);
  cli::refuse_clashing_paths(values, outputs);
  for (const char* flag : outputs) {
    if (values.count(flag)) check_writable(values[flag].as<std::string>());
  }
  return true;
}

}  // namespace zb::cli
