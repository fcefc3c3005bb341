// Result files of a sweep: whole-line appends, atomic rewrites, resume and merge.
#include "sim/app/sweep/output.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "sim/support/atomic_file.h"
#include "sim/support/error.h"

namespace zb::sweep {

std::string jsonl_path_for(const std::string& csv_path) {
  if (csv_path.size() > 4 && csv_path.ends_with(".csv")) return csv_path.substr(0, csv_path.size() - 4) + ".jsonl";
  return csv_path + ".jsonl";
}

namespace {

// Complete lines (those ending in '\n'), numbered from 1.
std::vector<std::string> complete_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (true) {
    const auto end = text.find('\n', start);
    if (end == std::string::npos) break;
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

long leading_point(const std::string& line) {
  long value = 0;
  std::size_t i = 0;
  for (; i < line.size() && line[i] >= '0' && line[i] <= '9'; ++i) value = value * 10 + (line[i] - '0');
  if (i == 0 || i >= line.size() || line[i] != ',') return -1;
  return value;
}

void write_all(int fd, const std::string& text, const std::string& path) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    }
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace

Lines read_lines(const std::string& csv_path, const std::string& expected_header,
                            const std::function<void(long, const nlohmann::json&, const std::string&)>& check) {
  const std::string jsonl_path = jsonl_path_for(csv_path);
  Lines out;
  if (!std::filesystem::exists(csv_path)) return out;
  const auto csv = complete_lines(read_file(csv_path));
  if (csv.empty()) return out;
  if (csv.front() != expected_header) {
    throw InputError(fmt::format("{}: line 1: the columns differ from this grid's ({}): resume only the same grid, "
                                 "or write to another --out",
                                 csv_path, expected_header));
  }
  std::map<long, std::string> csv_rows;
  for (std::size_t i = 1; i < csv.size(); ++i) {
    const long point = leading_point(csv[i]);
    if (point < 0) throw InputError(fmt::format("{}: line {}: not a sweep row: '{}'", csv_path, i + 1, csv[i]));
    csv_rows[point] = csv[i];
  }
  if (!std::filesystem::exists(jsonl_path)) return out;
  const auto jsonl = complete_lines(read_file(jsonl_path));
  for (std::size_t i = 0; i < jsonl.size(); ++i) {
    const std::string context = fmt::format("{}: line {}", jsonl_path, i + 1);
    const auto row = nlohmann::json::parse(jsonl[i], nullptr, false);
    if (row.is_discarded() || !row.is_object() || !row.contains("point") || !row["point"].is_number_integer()) {
      throw InputError(fmt::format("{}: not a sweep row", context));
    }
    const long point = row["point"].get<long>();
    check(point, row, context);
    const auto it = csv_rows.find(point);
    if (it != csv_rows.end()) out[point] = {it->second, jsonl[i]};
  }
  return out;
}

void write_files(const std::string& csv_path, const std::string& header, const Lines& lines) {
  std::string csv = header + "\n";
  std::string jsonl;
  for (const auto& [point, pair] : lines) {
    csv += pair.first + "\n";
    jsonl += pair.second + "\n";
  }
  const FileContent files[] = {{csv_path, std::move(csv)}, {jsonl_path_for(csv_path), std::move(jsonl)}};
  write_files_atomically(files);  // both or neither
}

Appender::Appender(const std::string& csv_path) : csv_path_(csv_path) {
  csv_fd_ = ::open(csv_path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  jsonl_fd_ = ::open(jsonl_path_for(csv_path).c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (csv_fd_ < 0 || jsonl_fd_ < 0) {
    if (csv_fd_ >= 0) ::close(csv_fd_);
    if (jsonl_fd_ >= 0) ::close(jsonl_fd_);
    throw InputError(fmt::format("{}: cannot open for appending: {}", csv_path, std::strerror(errno)));
  }
}

Appender::~Appender() {
  ::close(csv_fd_);
  ::close(jsonl_fd_);
}

void Appender::append(const Row& row) {
  // The JSON line first: a point counts as done only when its CSV line exists too.
  write_all(jsonl_fd_, row.json_line + "\n", jsonl_path_for(csv_path_));
  write_all(csv_fd_, row.csv_line + "\n", csv_path_);
}

Lines merge_files(const std::vector<std::string>& csv_paths, std::string& header, long& grid_points) {
  Lines merged;
  header.clear();
  grid_points = -1;
  bool first_row = true;
  // The grid's size, from the rows: a shard that lost its last rows, or a shard left out, leaves
  // no gap among the points present, only a shortfall against it.
  auto same_grid = [&](long point, const nlohmann::json& row, const std::string& context) {
    const auto it = row.find("grid_points");
    const long of = it != row.end() && it->is_number_integer() ? it->get<long>() : -1;
    if (!first_row && of != grid_points) {
      throw InputError(fmt::format("{}: point {} is of a grid of {} points, earlier rows of one of {}: not one grid",
                                   context, point, of < 0 ? std::string("unstated") : std::to_string(of),
                                   grid_points < 0 ? std::string("unstated") : std::to_string(grid_points)));
    }
    grid_points = of;
    first_row = false;
  };
  for (const auto& path : csv_paths) {
    if (!std::filesystem::exists(path)) throw InputError(fmt::format("{}: no such file", path));
    const auto csv = complete_lines(read_file(path));
    if (csv.empty()) throw InputError(fmt::format("{}: empty: not a sweep result", path));
    if (header.empty()) header = csv.front();
    if (csv.front() != header) {
      throw InputError(fmt::format("{}: line 1: other columns than {}: not the same grid", path, csv_paths.front()));
    }
    const Lines lines = read_lines(path, header, same_grid);
    if (lines.size() + 1 != csv.size()) {
      throw InputError(fmt::format("{}: {} rows but {} in {}: an unfinished or damaged run (resume it first)", path,
                                   csv.size() - 1, lines.size(), jsonl_path_for(path)));
    }
    for (const auto& [point, pair] : lines) {
      const auto [it, inserted] = merged.emplace(point, pair);
      if (!inserted && it->second != pair) {
        throw InputError(fmt::format("{}: point {} differs from the same point in an earlier file", path, point));
      }
    }
  }
  return merged;
}

}  // namespace zb::sweep
