// The two result files of a sweep (CSV and JSON lines): appending rows, resuming, merging.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "sim/app/sweep/row.h"

namespace zb::sweep {

// "r.csv" -> "r.jsonl"; any other name gets ".jsonl" appended.
std::string jsonl_path_for(const std::string& csv_path);

// Rows by point: the CSV line and the JSON line (no newlines).
using Lines = std::map<long, std::pair<std::string, std::string>>;

// Reads the complete rows of an earlier run of the same grid. A line without its newline (a
// killed write) is dropped; a point counts only when both files hold it. Throws InputError
// naming the file and line when the header differs or a row belongs to another grid.
// `check` gets (point, the JSON line's object, context) and throws when they do not match the grid.
Lines read_lines(const std::string& csv_path, const std::string& expected_header,
                            const std::function<void(long, const nlohmann::json&, const std::string&)>& check);

// Writes both files whole (header, rows in point order), atomically.
void write_files(const std::string& csv_path, const std::string& header, const Lines& lines);

// Appends rows as they finish: one write() of a whole line per file, so a killed sweep leaves
// only complete rows (and at most one partial last line, which a resume drops).
class Appender {
 public:
  Appender(const std::string& csv_path);
  ~Appender();
  Appender(const Appender&) = delete;
  Appender& operator=(const Appender&) = delete;
  void append(const Row& row);

 private:
  int csv_fd_ = -1;
  int jsonl_fd_ = -1;
  std::string csv_path_;
};

// Merges the results of several runs (e.g. the shards of a grid): same header, rows by point;
// a point present twice must be identical; every row states the same grid size (`grid_points`,
// -1 when none does: files of a zbsim before 2026-12). Errors name the file.
Lines merge_files(const std::vector<std::string>& csv_paths, std::string& header, long& grid_points);

}  // namespace zb::sweep
