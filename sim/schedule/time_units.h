// Conversion of a trace's time unit to microseconds (Chrome trace) and axis labels.
#pragma once

#include <string_view>

namespace zb {

// "s", "ms", "us", "ns"; anything else (e.g. unit-less costs) is treated as milliseconds.
constexpr double microseconds_per(std::string_view unit) {
  if (unit == "s") return 1e6;
  if (unit == "us") return 1.0;
  if (unit == "ns") return 1e-3;
  return 1e3;
}

}  // namespace zb
