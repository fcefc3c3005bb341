// The house's error vocabulary, on its ground floor so that the cost model and every floor above
// it throw and catch the same types: every failure is a zb::Error; bad user input is an
// InputError (exit code 2). sim/support/error.h adds the simulator's own (ScheduleError).
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace zb {

// Base of every exception the project throws; caught once per program.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad input from a user: a flag, a file, a field, a schedule. Messages name the file, field and value.
class InputError : public Error {
 public:
  using Error::Error;
};

// User text as it appears inside a message: at most 60 characters, longer text cut with "..."
// (a 10,000-character line in a bad file must not become a 10,000-character error).
inline std::string excerpt(std::string_view text) {
  constexpr std::size_t kMax = 60;
  if (text.size() <= kMax) return std::string(text);
  return std::string(text.substr(0, kMax)) + "...";
}

}  // namespace zb
