// A result or the exception that replaced it, as one byte record: how the SimGrid half of the
// engine (its module, run in a forked child) reports to the parent with no exception crossing.
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace zb::engine {

// Runs `body` and returns a record of its bytes, or of the type (ScheduleError, InputError,
// Error, anything else) and message of what it threw. Never throws.
std::string tagged_result(const std::function<std::string()>& body);

// Whether `bytes` is exactly one whole record (a child that died while writing leaves less).
bool is_tagged_record(std::string_view bytes);

// The payload of a whole record, or the exception it carries thrown again with its type and
// message (any other exception type becomes an Error "SimGrid engine: internal failure: ...").
std::string untag_result(std::string_view record);

}  // namespace zb::engine
