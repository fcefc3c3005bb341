// Parsing a measured row's cells, with errors that point at the cell.
#include "sim/app/validate/detail/row_cells.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include "sim/support/error.h"

namespace zb::validate {

std::string row_label(const MeasuredRow& row, std::string_view file) {
  return fmt::format("{}:{} (row {})", file, row.line, excerpt(row.id()));
}

std::optional<int> whole_cell(const MeasuredRow& row, std::string_view column, std::string_view file) {
  const std::string& text = row.cell(column);
  if (text.empty()) return std::nullopt;
  int value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < 0) {
    throw InputError(fmt::format("{}: column '{}': '{}' is not a whole number >= 0", row_label(row, file), column,
                                 excerpt(text)));
  }
  return value;
}

std::optional<double> number_cell(const MeasuredRow& row, std::string_view column, std::string_view file) {
  const std::string& text = row.cell(column);
  if (text.empty()) return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) || value < 0) {
    throw InputError(fmt::format("{}: column '{}': '{}' is not a number >= 0", row_label(row, file), column,
                                 excerpt(text)));
  }
  return value;
}

bool contains(std::string_view text, std::string_view part) { return text.find(part) != std::string_view::npos; }

bool contains_nocase(std::string_view text, std::string_view part) {
  const auto lower = [](unsigned char c) { return std::tolower(c); };
  return std::search(text.begin(), text.end(), part.begin(), part.end(),
                     [&](char a, char b) { return lower(a) == lower(b); }) != text.end();
}

}  // namespace zb::validate
