// zbsim plot: SVG charts from a sweep's results CSV (bubble rate vs m, throughput vs memory
// limit, peak memory per device; the charts are made by sim/app/sweep/plot.h).
#include <fmt/format.h>

#include <iostream>

#include "sim/cli/common/command_line.h"
#include "sim/cli/commands.h"
#include "sim/cli/common/problem_options.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/app/sweep/plot.h"

namespace zb::cli {

namespace po = boost::program_options;

int run_plot(int argc, char** argv) {
  po::options_description options("Plot");
  options.add_options()
      ("results", po::value<std::string>(), "results CSV written by zbsim sweep (also the first positional argument)")
      ("svg", po::value<std::string>(), "SVG file to write")
      ("chart", po::value<std::string>()->default_value("all"), "bubble | throughput | memory | all")
      ("where", po::value<std::vector<std::string>>()->composing(), "keep rows with COLUMN=VALUE (repeatable)");
  po::options_description all = options;
  all.add_options()("help,h", "show this help");
  po::positional_options_description positional;
  positional.add("results", 1);
  po::variables_map values;
  po::store(po::command_line_parser(argc, argv).options(all).positional(positional).run(), values);
  if (values.count("help")) {
    std::cout << "usage: zbsim plot RESULTS.csv --svg OUT.svg [--chart bubble|throughput|memory|all] [--where COL=VALUE]\n\n"
              << all
              << "\nexample:\n  zbsim sweep --grid scenarios/sweeps/bubble-vs-m.json --out r.csv\n"
                 "  zbsim plot r.csv --svg r.svg\n";
    return 0;
  }
  po::notify(values);
  cli::refuse_empty_values(values, all);
  cli::refuse_clashing_paths(values, {"svg"});
  if (!values.count("results")) throw InputError("missing the results file (zbsim plot RESULTS.csv --svg OUT.svg)");
  if (!values.count("svg")) throw InputError("--svg: missing (the SVG file to write)");
  const std::string path = values["results"].as<std::string>();
  sweep::PlotOptions plot;
  plot.kind = sweep::parse_chart_kind(values["chart"].as<std::string>());
  if (values.count("where")) plot.where = values["where"].as<std::vector<std::string>>();
  const sweep::Plot charts = sweep::plot_results(sweep::read_table(path), path, plot);
  write_file_atomically(values["svg"].as<std::string>(), sweep::render_charts(charts.charts));
  fmt::print("plot: {} chart{} from {} rows of {} -> {}\n", charts.charts.size(), charts.charts.size() == 1 ? "" : "s",
             charts.rows, path, values["svg"].as<std::string>());
  return 0;
}

}  // namespace zb::cli
