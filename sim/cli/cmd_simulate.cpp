// zbsim simulate: one schedule through an engine, with its trace written in every format.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/single_run.h"
#include "sim/app/catalog/schedule_files.h"
#include "sim/support/atomic_file.h"
#include "sim/cli/commands.h"
#include "sim/support/error.h"
#include "sim/cli/common/problem_options.h"
#include "sim/app/catalog/result_table.h"
#include "sim/formats/trace_json.h"
#include "sim/formats/trace_writers.h"

namespace zb::cli {

namespace po = boost::program_options;

int run_simulate(int argc, char** argv) {
  po::options_description options = problem_options();
  po::options_description own("Simulate");
  own.add_options()
      ("schedule", po::value<std::string>(),
       catalog::schedule_option_help().c_str())
      ("schedule-file", po::value<std::string>(), "a schedule file instead: text (d0: F0 ...), JSON or PyTorch CSV, told apart by content; its shape and placement are taken")
      ("engine", po::value<std::string>()->default_value("eval"), "eval | simgrid")
      ("cluster", po::value<std::string>(), "simgrid: cluster JSON file, or 'ideal' (latency = t_comm, no bandwidth limit); default: the scenario's cluster, else ideal")
      ("verbose", po::bool_switch(), "engine logs on stderr")
      ("format", po::value<std::string>()->default_value("table"), "table | json | csv")
      ("trace", po::value<std::string>(), "write the trace as our JSON")
      ("chrome", po::value<std::string>(), "write the trace as Chrome trace event JSON (Perfetto)")
      ("svg", po::value<std::string>(), "write the timeline as SVG");
  options.add(own);
  options.add(step_options());
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim simulate (--scenario FILE | problem flags) [--schedule NAME | --schedule-file F]\n"
                          "       [--engine eval|simgrid] [--cluster FILE|ideal] [--format table|json|csv]\n"
                          "       [--trace F.json] [--chrome F.json] [--svg F.svg]",
                          "  zbsim simulate --p 4 --m 8 --tf 1 --tb 1 --tw 1 --schedule zb-h1 --svg zb-h1.svg",
                          {"trace", "chrome", "svg"})) {
    return 0;
  }
  const Scenario scenario = scenario_from_options(values);
  const Format format = parse_format(values["format"].as<std::string>());
  catalog::EngineOptions engine;
  engine.engine = values["engine"].as<std::string>();
  if (values.count("cluster")) engine.cluster = values["cluster"].as<std::string>();
  apply_step_options(values, engine);
  engine.verbose = values["verbose"].as<bool>();
  if (values.count("schedule") && values.count("schedule-file")) {
    throw InputError("give either --schedule or --schedule-file, not both");
  }
  std::optional<std::string> name;
  if (values.count("schedule")) name = values["schedule"].as<std::string>();
  std::optional<catalog::GivenSchedule> given;
  if (values.count("schedule-file")) {
    const std::string path = values["schedule-file"].as<std::string>();
    std::string note;
    given = catalog::GivenSchedule{catalog::read_schedule_file(path, &note), path};
    if (!note.empty()) std::cerr << fmt::format("zbsim: {}: {}\n", path, note);
  }
  const catalog::SingleRun run = catalog::run_single(scenario, name, given, engine);
  if (const std::string warning = catalog::engine_warning(run.spec, engine); !warning.empty()) {
    std::cerr << "zbsim simulate: warning: " << warning << "\n";
  }
  const catalog::ResultRow& row = run.row;
  const Trace& trace = run.trace;
  // All outputs or none: written together once every one of them is complete.
  std::vector<FileContent> files;
  if (values.count("trace")) files.push_back({values["trace"].as<std::string>(), to_json(trace).dump() + "\n"});
  if (values.count("chrome")) {
    files.push_back({values["chrome"].as<std::string>(), to_chrome_trace({{row.schedule, &trace}})});
  }
  if (values.count("svg")) files.push_back({values["svg"].as<std::string>(), to_svg({{row.schedule, &trace}})});
  write_files_atomically(files);
  std::cout << results_text(run.spec, {row}, format);
  return 0;
}

}  // namespace zb::cli
