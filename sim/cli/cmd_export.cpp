// zbsim export: a schedule in another form (text, JSON, PyTorch CSV, SVG, Chrome trace, trace JSON).
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "sim/schedule/atomic_file.h"
#include "sim/cli/commands.h"
#include "sim/schedule/error.h"
#include "sim/schedule/evaluator.h"
#include "sim/cli/problem_options.h"
#include "sim/schedule/pytorch_csv.h"
#include "sim/catalog/generators.h"
#include "sim/catalog/run_row.h"
#include "sim/catalog/scenario_input.h"
#include "sim/catalog/schedule_files.h"
#include "sim/schedule/trace_json.h"
#include "sim/schedule/trace_writers.h"
#include "sim/schedule/validator.h"

namespace zb::cli {

namespace po = boost::program_options;

int run_export(int argc, char** argv) {
  po::options_description options = problem_options();
  po::options_description own("Export");
  own.add_options()
      ("schedule", po::value<std::string>(), ("schedule name: " + catalog::generator_list()).c_str())
      ("schedule-file", po::value<std::string>(), "or a schedule file: text (d0: F0 ...), JSON or PyTorch CSV, told apart by content; its shape and placement are taken")
      ("to", po::value<std::string>()->required(), "text | json | pytorch-csv | svg | chrome | trace")
      ("out", po::value<std::string>(), "output file (default: standard output)");
  options.add(own);
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim export (--schedule NAME | --schedule-file F) (problem flags) --to FORMAT [--out F]\n"
                          "       costs default to 1 when not given (they only matter for svg, chrome and trace)",
                          "  zbsim export --schedule zb-h1 --p 4 --m 8 --to pytorch-csv --out zb-h1.csv", {"out"})) {
    return 0;
  }
  Scenario scenario = scenario_from_options(values);
  catalog::default_unit_costs(scenario.spec);
  const std::string to = values["to"].as<std::string>();
  const std::string formats[] = {"text", "json", "pytorch-csv", "svg", "chrome", "trace"};
  if (std::find(std::begin(formats), std::end(formats), to) == std::end(formats)) {
    throw InputError(fmt::format("--to: unknown format '{}' (expected text, json, pytorch-csv, svg, chrome or trace)", to));
  }
  if (values.count("schedule") == values.count("schedule-file")) {
    throw InputError("give exactly one of --schedule NAME or --schedule-file FILE");
  }
  Schedule schedule;
  Problem problem;
  if (values.count("schedule-file")) {
    schedule = catalog::load_schedule_file(values["schedule-file"].as<std::string>(), scenario.spec);
    problem = scenario.spec.build(scenario.source);
  } else {
    catalog::NamedSchedule named =
        catalog::generate_named(values["schedule"].as<std::string>(), scenario.spec, scenario.source);
    problem = std::move(named.problem);
    schedule = std::move(named.schedule);
  }
  validate(problem, schedule, MemoryCheck::skip);

  std::string content;
  if (to == "text") {
    content = to_text(schedule);
  } else if (to == "json") {
    content = to_json(schedule).dump(2) + "\n";
  } else if (to == "pytorch-csv") {
    content = to_pytorch_csv(problem, schedule);
  } else {
    const Trace trace = evaluate(problem, schedule);
    content = to == "svg" ? to_svg({{schedule.name, &trace}})
              : to == "chrome" ? to_chrome_trace({{schedule.name, &trace}})
                               : to_json(trace).dump() + "\n";
  }
  if (values.count("out")) {
    write_file_atomically(values["out"].as<std::string>(), content);
  } else {
    std::cout << content;
  }
  return 0;
}

}  // namespace zb::cli
