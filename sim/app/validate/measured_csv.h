// A table of measured training runs (tests/data/measured/README.md lists its columns): leading
// "#" comment lines, a header, then one row per measurement, cells quoted as RFC 4180 quotes them.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace zb::validate {

struct MeasuredRow {
  int line = 0;  // where the row starts in its file (1-based)
  std::map<std::string, std::string, std::less<>> cells;

  // The cell of `column` ("" when empty); every column of kMeasuredColumns is present.
  const std::string& cell(std::string_view column) const;
  const std::string& id() const { return cell("id"); }
};

struct MeasuredTable {
  std::string path;
  std::vector<MeasuredRow> rows;
};

// The columns a measured table must have (others are kept and ignored).
extern const std::vector<std::string> kMeasuredColumns;

// Reads a table; InputError naming the file, the line and the column on a malformed file (a
// missing column, a row with the wrong number of cells, a duplicate id, bad quoting).
MeasuredTable read_measured_csv(const std::string& path);
MeasuredTable parse_measured_csv(std::string_view text, const std::string& source);

}  // namespace zb::validate
