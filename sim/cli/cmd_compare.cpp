// zbsim compare: every chosen schedule on one problem, side by side.
#include <iostream>
#include <optional>

#include "sim/support/atomic_file.h"
#include "sim/cli/commands.h"
#include "sim/cli/common/problem_options.h"
#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/comparison.h"
#include "sim/app/catalog/result_table.h"
#include "sim/formats/trace_writers.h"

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
  catalog::EngineOptions engine;
  apply_step_options(values, engine);
  catalog::check_engine_options(engine);
  std::optional<std::vector<std::string>> chosen;
  if (values.count("schedules")) chosen = split_list(values["schedules"].as<std::string>());
  const catalog::Comparison comparison = catalog::compare_schedules(scenario, chosen, engine);
  const std::vector<catalog::ResultRow>& rows = comparison.rows;
  std::vector<LabeledTrace> drawn;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].has_metrics) drawn.push_back({rows[i].schedule, &comparison.traces[i]});
  }
  // Both outputs or neither.
  std::vector<FileContent> files;
  if (values.count("svg")) files.push_back({values["svg"].as<std::string>(), to_svg(drawn)});
  if (values.count("chrome")) files.push_back({values["chrome"].as<std::string>(), to_chrome_trace(drawn)});
  write_files_atomically(files);
  std::cout << results_text(scenario.spec, rows, format, scenario.memory ? &*scenario.memory : nullptr);
  return 0;
}

}  // namespace zb::cli
