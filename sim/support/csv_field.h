// One CSV cell as RFC 4180 writes it, for every CSV writer (results, sweep rows).
#pragma once

#include <string>
#include <string_view>

namespace zb {

// Quoted ("" for a quote) when it holds a comma, a quote or a line break (\n or \r); as is otherwise.
inline std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace zb
