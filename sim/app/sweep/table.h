// Reading a sweep's results CSV back as a table of named string cells (for zbsim plot).
#pragma once

#include <map>
#include <string>
#include <vector>

namespace zb::sweep {

struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;

  // Index of a column, or -1.
  int column(const std::string& name) const;
  // The cell, or "" when the column is missing.
  const std::string& cell(std::size_t row, const std::string& name) const;
};

// RFC 4180 CSV (quoted cells, doubled quotes). Throws InputError naming the file and line.
Table read_table(const std::string& path);

}  // namespace zb::sweep
