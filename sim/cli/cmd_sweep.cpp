// zbsim sweep: the cartesian product of a grid file's axes, in parallel, into CSV and JSON lines.
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <iostream>
#include <map>
#include <thread>

#include "sim/cli/commands.h"
#include "sim/schedule/error.h"
#include "sim/cli/problem_options.h"
#include "sim/cli/sweep_grid.h"
#include "sim/cli/sweep_output.h"
#include "sim/cli/sweep_progress.h"
#include "sim/cli/sweep_row.h"
#include "sim/cli/sweep_runner.h"

namespace zb::cli {

namespace po = boost::program_options;

namespace {

struct Shard {
  long index = 0;  // 0-based
  long count = 1;
};

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  long i = 0;
  long n = 0;
  const bool ok = slash != std::string::npos &&
                  std::from_chars(text.data(), text.data() + slash, i).ptr == text.data() + slash &&
                  std::from_chars(text.data() + slash + 1, text.data() + text.size(), n).ptr ==
                      text.data() + text.size() &&
                  n >= 1 && i >= 1 && i <= n;
  if (!ok) throw InputError(fmt::format("--shard: '{}': expected I/N with 1 <= I <= N, e.g. 2/8", text));
  return {i - 1, n};
}

std::string summary(const std::map<std::string, long>& counts) {
  std::string text;
  for (const auto& [status, count] : counts) text += fmt::format("{}{} {}", text.empty() ? "" : ", ", count, status);
  return text.empty() ? "nothing to run" : text;
}

}  // namespace

int run_sweep(int argc, char** argv) {
  po::options_description options("Sweep");
  options.add_options()
      ("grid", po::value<std::string>(), "grid file (see scenarios/sweeps/ and docs/file-formats.md)")
      ("out", po::value<std::string>(), "results CSV; the JSON lines go beside it (results.jsonl)")
      ("jobs", po::value<int>(), "parallel workers (default: the number of cores)")
      ("shard", po::value<std::string>(), "run only shard I of N (I/N, 1-based): points i with i % N == I-1")
      ("resume", po::bool_switch(), "keep the rows already in --out and run only the missing points")
      ("merge", po::value<std::vector<std::string>>()->multitoken(),
       "merge result files of one grid (e.g. its shards) into --out instead of running");
  po::variables_map values;
  if (!parse_command_line(argc, argv, options, values,
                          "zbsim sweep --grid FILE --out results.csv [--jobs N] [--shard I/N] [--resume]\n"
                          "       zbsim sweep --merge a.csv b.csv ... --out results.csv",
                          "  zbsim sweep --grid scenarios/sweeps/bubble-vs-m.json --out out/r.csv\n"
                          "  zbsim plot out/r.csv --svg out/r.svg")) {
    return 0;
  }
  if (!values.count("out")) throw InputError("--out: missing (the results CSV to write)");
  const std::string out = values["out"].as<std::string>();
  if (values.count("merge")) {
    if (values.count("grid") || values.count("shard") || values["resume"].as<bool>()) {
      throw InputError("--merge: takes only result files and --out (no --grid, --shard or --resume)");
    }
    std::string header;
    const auto files = values["merge"].as<std::vector<std::string>>();
    const SweepLines lines = merge_sweep_files(files, header);
    write_sweep_files(out, header, lines);
    fmt::print("sweep: merged {} files, {} points -> {}, {}\n", files.size(), lines.size(), out, jsonl_path_for(out));
    return 0;
  }
  if (!values.count("grid")) throw InputError("--grid: missing (a grid file, e.g. scenarios/sweeps/bubble-vs-m.json)");
  int jobs = values.count("jobs") ? values["jobs"].as<int>() : static_cast<int>(std::thread::hardware_concurrency());
  if (values.count("jobs") && (jobs < 1 || jobs > 1024)) {
    throw InputError(fmt::format("--jobs: {}: expected 1 to 1024", jobs));
  }
  jobs = std::max(1, jobs);
  const Shard shard = values.count("shard") ? parse_shard(values["shard"].as<std::string>()) : Shard{};
  const bool resume = values["resume"].as<bool>();

  const SweepGrid grid = load_sweep_grid(values["grid"].as<std::string>());
  const std::string header = sweep_csv_header(grid);
  const long total = grid.size();
  auto in_shard = [&](long point) { return point % shard.count == shard.index; };

  SweepLines lines;
  if (resume) {
    lines = read_sweep_lines(out, header, [&](long point, const nlohmann::json& axes, const std::string& context) {
      if (point < 0 || point >= total || !in_shard(point)) {
        throw InputError(fmt::format("{}: point {} is not in this grid{}: resume only the same grid and shard", context,
                                     point, shard.count > 1 ? " shard" : ""));
      }
      const nlohmann::json expected(grid.point(point).axes);
      if (axes != expected) {
        throw InputError(fmt::format("{}: point {} was run with {}, the grid now gives {}: resume only the same grid, "
                                     "or write to another --out",
                                     context, point, axes.dump(), expected.dump()));
      }
    });
  }
  std::vector<long> pending;
  bool simgrid = false;
  for (long point = shard.index; point < total; point += shard.count) {
    if (lines.contains(point)) continue;
    pending.push_back(point);
    simgrid = simgrid || grid.point(point).engine == "simgrid";
  }
  const long kept = static_cast<long>(lines.size());
  write_sweep_files(out, header, lines);  // a fresh start, or the earlier rows without a torn last line

  std::map<std::string, long> counts;
  {
    SweepAppender appender(out);
    SweepProgress progress(static_cast<long>(pending.size()), ::isatty(STDERR_FILENO) == 1);
    run_sweep_points(grid, pending, jobs, simgrid, [&](const SweepRow& row) {
      appender.append(row);
      lines[row.point] = {row.csv_line, row.json_line};
      ++counts[row.status];
      progress.tick();
    });
    progress.finish();
  }
  write_sweep_files(out, header, lines);
  const long selected = shard.count == 1 ? total : (total - shard.index + shard.count - 1) / shard.count;
  fmt::print("sweep: {}: {} points{}, {} already done, ran {}: {} -> {}, {}\n", grid.source, total,
             shard.count > 1 ? fmt::format(" (shard {}/{}: {})", shard.index + 1, shard.count, selected) : "", kept,
             pending.size(), summary(counts), out, jsonl_path_for(out));
  return 0;
}

}  // namespace zb::cli
