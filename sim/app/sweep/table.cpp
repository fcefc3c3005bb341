// A small RFC 4180 CSV reader for results files.
#include "sim/app/sweep/table.h"

#include <fmt/format.h>

#include "sim/support/atomic_file.h"
#include "sim/support/error.h"

namespace zb::sweep {

int Table::column(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i] == name) return static_cast<int>(i);
  }
  return -1;
}

const std::string& Table::cell(std::size_t row, const std::string& name) const {
  static const std::string empty;
  const int c = column(name);
  return c < 0 || static_cast<std::size_t>(c) >= rows[row].size() ? empty : rows[row][c];
}

Table read_table(const std::string& path) {
  const std::string text = read_file(path);
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string cellText;
  bool quoted = false;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        cellText += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        cellText += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      record.push_back(std::move(cellText));
      cellText.clear();
    } else if (c == '\n') {
      record.push_back(std::move(cellText));
      cellText.clear();
      records.push_back(std::move(record));
      record.clear();
      ++line;
    } else if (c != '\r') {
      cellText += c;
    }
  }
  if (quoted) throw InputError(fmt::format("{}: line {}: unterminated quoted cell", path, line));
  // A last line without its newline is an unfinished write: left out.
  if (records.empty()) throw InputError(fmt::format("{}: empty: not a results file", path));
  Table table;
  table.columns = std::move(records.front());
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != table.columns.size()) {
      throw InputError(fmt::format("{}: row {} has {} cells, the header {}", path, r + 1, records[r].size(),
                                   table.columns.size()));
    }
    table.rows.push_back(std::move(records[r]));
  }
  return table;
}

}  // namespace zb::sweep
