// Error types: every failure is a zb::Error; bad user input is an InputError (exit code 2).
#pragma once

#include <stdexcept>
#include <string>

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

// A schedule that cannot run: missing actions, wrong order, deadlock, memory over the limit.
class ScheduleError : public InputError {
 public:
  using InputError::InputError;
};

}  // namespace zb
