// zbsim export: a schedule in another form (text, JSON, PyTorch CSV with or without its
// communication actions, torchtitan settings, SVG, Chrome trace, trace JSON).
#include <fmt/format.h>

#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "sim/support/atomic_file.h"
#include "sim/cli/commands.h"
#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/cli/common/problem_options.h"
#include "sim/formats/pytorch_csv.h"
#include "sim/formats/torchtitan_settings.h"
#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/run_row.h"
#include "sim/app/catalog/scenario_input.h"
#include "sim/app/catalog/schedule_files.h"
#include "sim/formats/trace_json.h"
#include "sim/formats/trace_writers.h"
#include "sim/core/validator.h"

namespace zb::cli {

namespace po = boost::program_options;

int run_export(int argc, char** argv) {
  po::options_description options = problem_options();
  po::options_description own("Export");
  own.add_options()
      ("schedule", po::value<std::string>(), ("schedule name: " + catalog::generator_list()).c_str())
      ("schedule-file", po::value<std::string>(), "or a schedule file: text (d0: F0 ...), JSON or PyTorch CSV, told apart by content; its shape and placement are taken")
      ("to", po::value<std::string>()->required(),
       "text | json | pytorch-csv (compute actions, what torch's _load_csv reads) | pytorch-csv-comms (with "
       "SEND/RECV, UNSHARD/RESHARD and REDUCE_GRAD, as PyTorch's runtime lowers and dumps it) | torchtitan (the CSV "
       "to --out, torchtitan's flags to standard output) | svg | chrome | trace")
      ("out", po::value<std::string>(), "output file (default: standard output; required for torchtitan)")
      ("layers", po::value<int>(), "torchtitan: the model's transformer layers (needed beyond 2 chunks per rank)");
  options.add(own);
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim export (--schedule NAME | --schedule-file F) (problem flags) --to FORMAT [--out F]\n"
                          "       costs default to 1 when not given (they only matter for svg, chrome and trace)",
                          "  zbsim export --schedule zb-h1 --p 4 --m 8 --to pytorch-csv --out zb-h1.csv\n"
                          "  zbsim export --schedule zb-v --p 4 --m 8 --to torchtitan --out zb-v.csv",
                          {"out"})) {
    return 0;
  }
  Scenario scenario = scenario_from_options(values);
  catalog::default_unit_costs(scenario.spec);
  const std::string to = values["to"].as<std::string>();
  const std::string formats[] = {"text", "json", "pytorch-csv", "pytorch-csv-comms", "torchtitan", "svg", "chrome", "trace"};
  if (std::find(std::begin(formats), std::end(formats), to) == std::end(formats)) {
    throw InputError(fmt::format("--to: unknown format '{}' (expected text, json, pytorch-csv, pytorch-csv-comms, "
                                 "torchtitan, svg, chrome or trace)",
                                 to));
  }
  if (to == "torchtitan" && !values.count("out")) {
    throw InputError("--to torchtitan needs --out FILE.csv: torchtitan reads the schedule from that file");
  }
  if (values.count("layers") && to != "torchtitan") throw InputError("--layers is only for --to torchtitan");
  if (values.count("layers") && values["layers"].as<int>() < 1) {
    throw InputError(fmt::format("--layers: {} is not a layer count (expected 1 or more)", values["layers"].as<int>()));
  }
  if (values.count("schedule") == values.count("schedule-file")) {
    throw InputError("give exactly one of --schedule NAME or --schedule-file FILE");
  }
  Schedule schedule;
  Problem problem;
  if (values.count("schedule-file")) {
    const std::string path = values["schedule-file"].as<std::string>();
    std::string note;
    schedule = catalog::load_schedule_file(path, scenario.spec, &note);
    if (!note.empty()) std::cerr << fmt::format("zbsim: {}: {}\n", path, note);
    problem = scenario.spec.build(scenario.source);
  } else {
    catalog::NamedSchedule named =
        catalog::generate_named(values["schedule"].as<std::string>(), scenario);
    problem = std::move(named.problem);
    schedule = std::move(named.schedule);
  }
  validate(problem, schedule, MemoryCheck::skip);

  std::string content;
  std::string settings;  // torchtitan: its flags, printed once the CSV is written
  if (to == "text") {
    content = to_text(schedule);
  } else if (to == "json") {
    content = to_json(schedule).dump(2) + "\n";
  } else if (to == "pytorch-csv" || to == "torchtitan") {
    content = to_pytorch_csv(problem, schedule);
    if (to == "torchtitan") {
      const std::optional<int> layers = values.count("layers") ? std::optional<int>(values["layers"].as<int>()) : std::nullopt;
      settings = torchtitan_settings(problem, values["out"].as<std::string>(), layers);
    }
  } else if (to == "pytorch-csv-comms") {
    content = to_pytorch_csv(problem, schedule, PytorchCsvForm::compute_comms);
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
  std::cout << settings;
  return 0;
}

}  // namespace zb::cli
