// The problem of a call: a scenario (None, a file path, or a dict in the scenario file's form)
// with the problem keyword arguments on top. Keywords are read exactly as zbsim reads its flags
// (the same GivenFields, applied by catalog::apply_given_fields), so the same value is accepted
// or refused with the same message.
#pragma once

#include <pybind11/pybind11.h>

#include <string_view>

#include "sim/app/catalog/scenario.h"

namespace zb::python {

// Keywords are the scenario keys (t_f, mem_limit) or the flags with '_' for '-' (tf, mem_limit);
// values are numbers, lists of numbers, or the flag's text ("2p", "vshape"); None means not given.
// An unknown keyword is a TypeError naming `function` and listing the fields.
Scenario scenario_from_arguments(const pybind11::object& scenario, const pybind11::kwargs& fields,
                                 std::string_view function);

// Whether the keyword arguments set the field with scenario key `key`.
bool gives_field(const pybind11::kwargs& fields, std::string_view key);

}  // namespace zb::python
