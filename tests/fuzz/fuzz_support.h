// What every fuzz target shares: the input as text, and the one verdict. Bad input must end as a
// zb::InputError (exit 2 in the binaries); anything else escaping (another exception, a crash, a
// sanitizer report) is a bug that libFuzzer keeps as a crash file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/support/error.h"

namespace zb::fuzz {

inline std::string text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Runs `body`; an InputError is the expected answer to bad input.
template <typename Body>
int only_input_errors(Body&& body) {
  try {
    body();
  } catch (const InputError&) {
  }
  return 0;
}

// Downstream work on what parsed is bounded, so a valid but huge input does not turn a run into a
// benchmark (the size limits of the binaries are tested elsewhere).
inline constexpr std::size_t kMaxActions = 20000;

}  // namespace zb::fuzz
