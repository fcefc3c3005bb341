// A problem field given by name and text on top of a scenario: a command-line flag (sim/cli/common)
// or a Python keyword argument, read, checked and worded the same way.
#pragma once

#include <string>

#include "sim/core/problem_fields.h"
#include "sim/core/problem_spec.h"

namespace zb::catalog {

struct GivenField {
  const ProblemField* field = nullptr;
  std::string text;

  // Sets the field on `spec`; InputError naming the flag and value.
  void apply(ProblemSpec& spec) const;
};

}  // namespace zb::catalog
