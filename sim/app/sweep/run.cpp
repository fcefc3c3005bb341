// Shards, resume and the run of a whole sweep into its two result files.
#include "sim/app/sweep/run.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <thread>

#include "sim/support/error.h"
#include "sim/app/sweep/output.h"
#include "sim/app/sweep/progress.h"
#include "sim/app/sweep/row.h"
#include "sim/app/sweep/detail/runner.h"

namespace zb::sweep {

std::vector<long> Shard::points(long total) const {
  std::vector<long> out;
  for (long point = index; point < total; point += count) out.push_back(point);
  return out;
}

Shard parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  long i = 0;
  long n = 0;
  const bool ok =
      slash != std::string::npos && std::from_chars(text.data(), text.data() + slash, i).ptr == text.data() + slash &&
      std::from_chars(text.data() + slash + 1, text.data() + text.size(), n).ptr == text.data() + text.size() &&
      n >= 1 && i >= 1 && i <= n;
  if (!ok) throw InputError(fmt::format("--shard: '{}': expected I/N with 1 <= I <= N, e.g. 2/8", text));
  return {i - 1, n};
}

namespace {

// SimGrid runs one engine per process: points that use it run in forked workers (runner.h).
bool needs_processes(const Grid& grid, const std::vector<long>& points) {
  return std::any_of(points.begin(), points.end(), [&](long point) { return grid.point(point).engine == "simgrid"; });
}

}  // namespace

std::string status_summary(const std::map<std::string, long>& statuses) {
  std::string text;
  for (const auto& [status, count] : statuses) text += fmt::format("{}{} {}", text.empty() ? "" : ", ", count, status);
  return text.empty() ? "nothing to run" : text;
}

void check_jobs(int jobs) {
  if (jobs < 1 || jobs > 1024) throw InputError(fmt::format("--jobs: {}: expected 1 to 1024", jobs));
}

int default_jobs() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

std::vector<Row> run_rows(const Grid& grid, int jobs) {
  std::vector<long> points(static_cast<std::size_t>(grid.size()));
  for (std::size_t i = 0; i < points.size(); ++i) points[i] = static_cast<long>(i);
  std::vector<Row> rows;
  rows.reserve(points.size());
  run_points(grid, points, jobs, needs_processes(grid, points), [&](const Row& row) { rows.push_back(row); });
  return rows;
}

RunReport run(const Grid& grid, const RunOptions& options) {
  const std::string header = csv_header(grid);
  const Shard shard = options.shard;
  RunReport report;
  report.total = grid.size();

  Lines lines;
  if (options.resume) {
    lines = read_lines(options.out, header, [&](long point, const nlohmann::json& row, const std::string& context) {
      const nlohmann::json axes = row.value("axes", nlohmann::json::object());
      if (point < 0 || point >= report.total || !shard.contains(point)) {
        throw InputError(fmt::format("{}: point {} is not in this grid{}: resume only the same grid and shard", context,
                                     point, shard.count > 1 ? " shard" : ""));
      }
      const nlohmann::json expected(grid.point(point).axes);
      if (axes != expected) {
        throw InputError(
            fmt::format("{}: point {} was run with {}, the grid now gives {}: resume only the same grid, "
                        "or write to another --out",
                        context, point, axes.dump(), expected.dump()));
      }
    });
  }
  std::vector<long> pending;
  const std::vector<long> selected = shard.points(report.total);
  for (const long point : selected) {
    if (!lines.contains(point)) pending.push_back(point);
  }
  report.selected = static_cast<long>(selected.size());
  report.kept = static_cast<long>(lines.size());
  report.ran = static_cast<long>(pending.size());
  write_files(options.out, header, lines);  // a fresh start, or the earlier rows without a torn last line
  {
    Appender appender(options.out);
    Progress progress(report.ran, options.progress);
    run_points(grid, pending, options.jobs, needs_processes(grid, pending), [&](const Row& row) {
      appender.append(row);
      lines[row.point] = {row.csv_line, row.json_line};
      ++report.statuses[row.status];
      progress.tick();
    });
    progress.finish();
  }
  write_files(options.out, header, lines);
  return report;
}

Merged merge(const std::vector<std::string>& csv_paths, const std::string& out, bool allow_partial) {
  std::string header;
  Merged merged;
  const Lines lines = merge_files(csv_paths, header, merged.grid_points);
  merged.points = static_cast<long>(lines.size());
  // Without the grid's size (older files), the points up to the last one present.
  const long total = merged.grid_points >= 0 ? merged.grid_points : (lines.empty() ? 0 : lines.rbegin()->first + 1);
  for (long point = 0; point < total; ++point) {
    if (!lines.count(point)) merged.missing.push_back(point);
  }
  if (!merged.missing.empty() && !allow_partial) {
    std::string first;
    for (std::size_t i = 0; i < std::min<std::size_t>(merged.missing.size(), 10); ++i) {
      first += fmt::format("{}{}", i ? ", " : "", merged.missing[i]);
    }
    throw InputError(fmt::format("merge: {} of the grid's {} points are missing ({}{}): a shard is unfinished or not "
                                 "given (resume it with --resume, then merge; --allow-partial merges anyway)",
                                 merged.missing.size(), total, first, merged.missing.size() > 10 ? ", ..." : ""));
  }
  write_files(out, header, lines);
  return merged;
}

}  // namespace zb::sweep
