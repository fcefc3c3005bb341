// zbsim sweep: the cartesian product of a grid file's axes, in parallel, into CSV and JSON lines
// (the sweep itself is sim/app/sweep/).
#include <unistd.h>

#include <fmt/format.h>

#include "sim/cli/commands.h"
#include "sim/cli/common/problem_options.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/app/sweep/grid.h"
#include "sim/app/sweep/output.h"
#include "sim/app/sweep/run.h"

namespace zb::cli {

namespace po = boost::program_options;

int run_sweep(int argc, char** argv) {
  po::options_description options("Sweep");
  options.add_options()
      ("grid", po::value<std::string>(), "grid file (see scenarios/sweeps/ and docs/file-formats.md)")
      ("out", po::value<std::string>(), "results CSV; the JSON lines go beside it (results.jsonl)")
      ("jobs", po::value<int>(), "parallel workers (default: the number of cores)")
      ("shard", po::value<std::string>(), "run only shard I of N (I/N, 1-based): points i with i % N == I-1")
      ("resume", po::bool_switch(), "keep the rows already in --out and run only the missing points")
      ("merge", po::value<std::vector<std::string>>()->multitoken(),
       "merge result files of one grid (e.g. its shards) into --out instead of running; every point of the grid "
       "must be there")
      ("allow-partial", po::bool_switch(), "with --merge: write the points present even when some are missing, saying so");
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim sweep --grid FILE --out results.csv [--jobs N] [--shard I/N] [--resume]\n"
                          "       zbsim sweep --merge a.csv b.csv ... --out results.csv",
                          "  zbsim sweep --grid scenarios/sweeps/bubble-vs-m.json --out out/r.csv\n"
                          "  zbsim plot out/r.csv --svg out/r.svg",
                          {"out"})) {
    return 0;
  }
  if (!values.count("out")) throw InputError("--out: missing (the results CSV to write)");
  const std::string out = values["out"].as<std::string>();
  check_writable(out);  // both files, before a sweep that may run for hours
  check_writable(sweep::jsonl_path_for(out));
  if (values["allow-partial"].as<bool>() && !values.count("merge")) {
    throw InputError("--allow-partial: only with --merge");
  }
  if (values.count("merge")) {
    if (values.count("grid") || values.count("shard") || values["resume"].as<bool>()) {
      throw InputError("--merge: takes only result files and --out (no --grid, --shard or --resume)");
    }
    const auto files = values["merge"].as<std::vector<std::string>>();
    const sweep::Merged merged = sweep::merge(files, out, values["allow-partial"].as<bool>());
    const std::string of = merged.grid_points >= 0 ? fmt::format(" of the grid's {}", merged.grid_points)
                                                   : std::string(" (the files do not say the grid's size)");
    fmt::print("sweep: merged {} files, {} points{} -> {}, {}\n", files.size(), merged.points, of, out,
               sweep::jsonl_path_for(out));
    if (!merged.missing.empty()) {
      fmt::print("sweep: partial: {} points missing (--allow-partial)\n", merged.missing.size());
    }
    return 0;
  }
  if (!values.count("grid")) throw InputError("--grid: missing (a grid file, e.g. scenarios/sweeps/bubble-vs-m.json)");
  sweep::RunOptions run;
  run.out = out;
  if (values.count("jobs")) {
    run.jobs = values["jobs"].as<int>();
    sweep::check_jobs(run.jobs);
  } else {
    run.jobs = sweep::default_jobs();
  }
  if (values.count("shard")) run.shard = sweep::parse_shard(values["shard"].as<std::string>());
  run.resume = values["resume"].as<bool>();
  run.progress = ::isatty(STDERR_FILENO) == 1;

  const sweep::Grid grid = sweep::load_grid(values["grid"].as<std::string>());
  const sweep::RunReport report = sweep::run(grid, run);
  const sweep::Shard& shard = run.shard;
  fmt::print("sweep: {}: {} points{}, {} already done, ran {}: {} -> {}, {}\n", grid.source, report.total,
             shard.count > 1 ? fmt::format(" (shard {}/{}: {})", shard.index + 1, shard.count, report.selected) : "",
             report.kept, report.ran, sweep::status_summary(report.statuses), out, sweep::jsonl_path_for(out));
  return 0;
}

}  // namespace zb::cli
