// Blanks around a field of our text readers (schedule text, PyTorch CSV): spaces, tabs and the
// '\r' of CRLF line ends.
#pragma once

#include <string_view>

namespace zb {

inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

}  // namespace zb
