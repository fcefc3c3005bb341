// zbsim validate: predictions against measured training runs (sim/app/validate/).
#include <unistd.h>

#include <iostream>

#include "sim/app/catalog/engines.h"
#include "sim/app/catalog/result_table.h"
#include "sim/app/sweep/progress.h"
#include "sim/app/sweep/run.h"
#include "sim/app/validate/scatter_svg.h"
#include "sim/app/validate/validation.h"
#include "sim/app/validate/validation_report.h"
#include "sim/cli/commands.h"
#include "sim/cli/common/problem_options.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"

namespace zb::cli {

namespace po = boost::program_options;

int run_validate(int argc, char** argv) {
  po::options_description options("Validate");
  options.add_options()
      ("measured", po::value<std::string>(), "CSV of measured runs (columns: tests/data/measured/README.md)")
      ("engine", po::value<std::string>()->default_value("eval"), "eval | simgrid (one row at a time)")
      ("cost-model", po::value<std::string>()->default_value("calibrated"),
       "calibrated (the hardware presets' fitted efficiencies) | roofline (the uncalibrated model, to compare)")
      ("jobs", po::value<int>(), "rows predicted at once on the evaluator (default: the number of cores)")
      ("format", po::value<std::string>()->default_value("table"), "table | json | csv (one line per row)")
      ("svg", po::value<std::string>(), "write the predicted-vs-measured scatter (log axes, y = x) as SVG");
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim validate --measured FILE.csv [--engine eval|simgrid] [--cost-model calibrated|roofline]\n"
                          "       [--jobs N]\n"
                          "       [--format table|json|csv] [--svg FILE]\n"
                          "  Builds a scenario from every measured row (model, GPU, cluster, tp/pp/vp/dp, batch,\n"
                          "  recompute, schedule), predicts its tokens/s per GPU and prints the error of each row,\n"
                          "  the median and 90th percentile of |error| per source, GPU, precision and schedule, and\n"
                          "  Spearman's rank correlation within each model on one kind of cluster. Rows zbsim cannot\n"
                          "  describe yet are listed with their reasons; values a row does not give are named.",
                          "  zbsim validate --measured tests/data/measured/dev.csv --svg validate.svg",
                          {"svg"})) {
    return 0;
  }
  if (!values.count("measured")) throw InputError("--measured: missing (a CSV of measured runs)");
  const Format format = parse_format(values["format"].as<std::string>());
  validate::ValidationOptions run;
  run.engine = values["engine"].as<std::string>();
  run.cost_model = parse_cost_model(values["cost-model"].as<std::string>());
  run.jobs = values.count("jobs") ? values["jobs"].as<int>() : sweep::default_jobs();
  const validate::MeasuredTable table = validate::read_measured_csv(values["measured"].as<std::string>());

  std::optional<sweep::Progress> progress;
  if (::isatty(STDERR_FILENO) == 1) progress.emplace(static_cast<long>(table.rows.size()), true);
  run.progress = [&](long, long) {
    if (progress) progress->tick();
  };
  const validate::Validation validation = validate::validate_measured(table, run);
  if (progress) progress->finish();
  if (values.count("svg")) write_file_atomically(values["svg"].as<std::string>(), validate::validation_scatter_svg(validation));
  switch (format) {
    case Format::json: std::cout << validate::validation_json(validation).dump(2) << "\n"; break;
    case Format::csv: std::cout << validate::validation_csv(validation); break;
    case Format::table: std::cout << validate::validation_table(validation); break;
  }
  return 0;
}

}  // namespace zb::cli
