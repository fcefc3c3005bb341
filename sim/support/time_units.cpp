// Names and parsing of the time units (see time_units.h).
#include "sim/support/time_units.h"

#include <fmt/format.h>

#include "sim/support/error.h"

namespace zb {

namespace {

constexpr TimeUnit kUnits[] = {TimeUnit::s, TimeUnit::ms, TimeUnit::us, TimeUnit::ns};

}  // namespace

std::string_view time_unit_name(TimeUnit unit) {
  switch (unit) {
    case TimeUnit::s: return "s";
    case TimeUnit::ms: return "ms";
    case TimeUnit::us: return "us";
    case TimeUnit::ns: return "ns";
  }
  return "ms";
}

TimeUnit parse_time_unit(std::string_view text, std::string_view context) {
  for (TimeUnit unit : kUnits) {
    if (text == time_unit_name(unit)) return unit;
  }
  throw InputError(fmt::format("{}: unknown time unit '{}' (valid: s, ms, us, ns)", context, text));
}

}  // namespace zb
