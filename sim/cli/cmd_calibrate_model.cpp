// zbsim calibrate-model: the cost model's efficiencies fitted to measured runs, with
// leave-one-source-out cross-validation (sim/app/validate/calibration.h).
#include <unistd.h>

#include <fmt/format.h>

#include <filesystem>
#include <iostream>

#include "sim/app/catalog/result_table.h"
#include "sim/app/sweep/run.h"
#include "sim/app/validate/calibration.h"
#include "sim/cli/commands.h"
#include "sim/cli/common/problem_options.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"

namespace zb::cli {

namespace po = boost::program_options;

int run_calibrate_model(int argc, char** argv) {
  po::options_description options("Calibrate");
  options.add_options()
      ("measured", po::value<std::string>(), "CSV of measured runs (columns: tests/data/measured/README.md)")
      ("evaluations", po::value<int>()->default_value(300), "most evaluations of the loss per fit")
      ("jobs", po::value<int>(), "rows predicted at once (default: the number of cores)")
      ("format", po::value<std::string>()->default_value("table"), "table | json")
      ("out", po::value<std::string>(),
       "folder to write the calibration files into (the form of models/calibration/: <architecture>.json, which "
       "the hardware presets of that architecture use, and <preset>.json for a preset fitted on its own)");
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim calibrate-model --measured FILE.csv [--evaluations 300] [--jobs N] [--format table|json]\n"
                          "       [--out DIR]\n"
                          "  Fits, per GPU architecture (and per hardware preset with 10 or more rows of its own),\n"
                          "  the efficiencies the roofline leaves out (GEMM, attention and memory\n"
                          "  sustained fractions, a fixed cost per kernel, collective bandwidth efficiency) to the rows\n"
                          "  zbsim validate predicts, minimising the source-balanced mean |log(predicted/measured)|;\n"
                          "  then refits once per source without it and predicts it (leave-one-source-out). Fit only\n"
                          "  on the development set: tables kept aside are for checking the result.",
                          "  zbsim calibrate-model --measured tests/data/measured/dev.csv --out models/calibration")) {
    return 0;
  }
  if (!values.count("measured")) throw InputError("--measured: missing (a CSV of measured runs)");
  const Format format = parse_format(values["format"].as<std::string>());
  if (format == Format::csv) throw InputError("--format: zbsim calibrate-model writes table or json, not csv");
  validate::CalibrationOptions run;
  run.max_evaluations = values["evaluations"].as<int>();
  run.jobs = values.count("jobs") ? values["jobs"].as<int>() : sweep::default_jobs();
  const std::string out = values.count("out") ? values["out"].as<std::string>() : "";
  if (!out.empty() && !std::filesystem::is_directory(out)) {
    throw InputError(fmt::format("--out: '{}' is not a folder", out));
  }
  const validate::MeasuredTable table = validate::read_measured_csv(values["measured"].as<std::string>());
  const bool terminal = ::isatty(STDERR_FILENO) == 1;
  std::string current_fit;
  // On a terminal one line that counts evaluations; in a log, one line per fit as it starts.
  run.progress = [&](const std::string& fit, int evaluations) {
    if (terminal) {
      std::cerr << fmt::format("\r\033[Kfitting {}: {} evaluations", fit, evaluations) << std::flush;
    } else if (fit != current_fit) {
      std::cerr << fmt::format("fitting {}\n", fit) << std::flush;
    }
    current_fit = fit;
  };
  const validate::Calibration calibration = validate::calibrate(table, run);
  if (terminal) std::cerr << "\r\033[K";
  std::cout << (format == Format::json ? validate::calibration_json(calibration).dump(2) + "\n"
                                       : validate::calibration_table(calibration));
  for (const validate::ArchitectureFit& fit : calibration.fits) {
    if (out.empty() || fit.architecture.empty()) continue;
    const auto path = std::filesystem::path(out) / ((fit.preset.empty() ? fit.architecture : fit.preset) + ".json");
    write_file_atomically(path.string(), validate::calibration_file(calibration, fit).dump(2) + "\n");
    if (format == Format::table) std::cout << "wrote " << path.string() << "\n";
  }
  return 0;
}

}  // namespace zb::cli
