// zbsim compare: every chosen schedule on one problem, side by side.
#include <fmt/format.h>

#include <iostream>

#include "sim/schedule/atomic_file.h"
#include "sim/schedule/error.h"
#include "sim/cli/commands.h"
#include "sim/cli/problem_options.h"
#include "sim/catalog/generators.h"
#include "sim/catalog/run_row.h"
#include "sim/cli/results.h"
#include "sim/schedule/trace_writers.h"

namespace zb::cli {

namespace po = boost::program_options;

int run_compare(int argc, char** argv) {
  po::options_description options = problem_options();
  po::options_description own("Compare");
  own.add_options()
      ("schedules", po::value<std::string>(),
       ("comma-separated schedule names (default: the scenario's, or all): " + catalog::generator_list()).c_str())
      ("format", po::value<std::string>()->default_value("table"), "table | json | csv")
      ("svg", po::value<std::string>(), "write the timelines of all schedules, stacked, as SVG")
      ("chrome", po::value<std::string>(), "write all traces as one Chrome trace (Perfetto)");
  options.add(own);
  options.add(step_options());
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim compare [--scenario FILE | --p N --m N --tf X --tb X --tw X ...] [--schedules a,b]\n"
                          "       [--mem-limit X|Np] [--format table|json|csv] [--svg F] [--chrome F]",
                          "  zbsim compare --p 8 --m 24 --tf 18.522 --tb 18.086 --tw 9.337 --tcomm 0.601 \\\n"
                          "                --schedules 1f1b,zb-h1,zb-h2 --svg out/compare.svg",
                          {"svg", "chrome"})) {
    return 0;
  }
  const Scenario scenario = scenario_from_options(values);
  const Format format = parse_format(values["format"].as<std::string>());
  scenario.spec.build(scenario.source);  // bad problems fail here, before any output
  catalog::EngineOptions engine;
  apply_step_options(values, engine);
  catalog::check_engine_options(engine);
  std::vector<std::string> names = values.count("schedules") ? split_list(values["schedules"].as<std::string>())
                                   : scenario.schedules.empty() ? catalog::generators().names()
                                                                : scenario.schedules;
  for (const auto& name : names) {
    try {
      catalog::generators().get(name);  // unknown names fail before any work
    } catch (const InputError& e) {
      if (values.count("schedules") || scenario.schedules.empty()) throw;
      throw InputError(fmt::format("{}: field 'schedules': {}", scenario.source, e.what()));
    }
  }

  std::vector<catalog::ResultRow> rows;
  std::vector<Trace> traces(names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    rows.push_back(catalog::run_generator_row(names[i], scenario.spec, engine, &traces[i]));
  }
  std::vector<LabeledTrace> drawn;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].has_metrics) drawn.push_back({rows[i].schedule, &traces[i]});
  }
  if (values.count("svg")) write_file_atomically(values["svg"].as<std::string>(), to_svg(drawn));
  if (values.count("chrome")) write_file_atomically(values["chrome"].as<std::string>(), to_chrome_trace(drawn));
  std::cout << results_text(scenario.spec, rows, format);
  return 0;
}

}  // namespace zb::cli
