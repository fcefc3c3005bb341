// The time units costs and traces are given in: one enum, parsed once (an unknown unit is bad
// input listing the valid ones), with the conversions the trace writers and engines need.
#pragma once

#include <string_view>

namespace zb {

enum class TimeUnit { s, ms, us, ns };

std::string_view time_unit_name(TimeUnit unit);

// "s", "ms", "us" or "ns"; anything else throws InputError naming `context`, the text and the
// valid units.
TimeUnit parse_time_unit(std::string_view text, std::string_view context);

constexpr double seconds_per(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::s: return 1.0;
    case TimeUnit::ms: return 1e-3;
    case TimeUnit::us: return 1e-6;
    case TimeUnit::ns: return 1e-9;
  }
  return 1e-3;
}

constexpr double microseconds_per(TimeUnit unit) { return seconds_per(unit) * 1e6; }

}  // namespace zb
