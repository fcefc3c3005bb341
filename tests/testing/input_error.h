// The message of the InputError a call throws, for tests of error messages.
#pragma once

#include <functional>
#include <string>

#include "sim/support/error.h"

namespace zb::testing {

// The InputError's what(), or "no error" when the call returns normally (other exceptions pass).
inline std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace zb::testing
