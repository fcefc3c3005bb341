// Python objects to and from the project's JSON values, so every reader and writer of the core is
// used as it is: Python data goes in as the JSON it would be in a file, results come back as the
// JSON the CLI prints, made of plain dicts, lists, strings and numbers.
#pragma once

#include <pybind11/pybind11.h>

#include <nlohmann/json.hpp>

#include <string_view>

namespace zb::python {

// Any JSON-serialisable object (dict, list, str, int, float, bool, None; Python's json module
// decides), as ordered JSON (a dict's keys stay in their order: sweep axes depend on it).
// ValueError naming `what` when the object is not serialisable.
nlohmann::ordered_json ordered_json_from_python(const pybind11::handle& object, std::string_view what);
nlohmann::json json_from_python(const pybind11::handle& object, std::string_view what);

// JSON values as Python objects: objects become dicts, arrays lists.
pybind11::object python_from_json(const nlohmann::json& value);
pybind11::object python_from_json(const nlohmann::ordered_json& value);

}  // namespace zb::python
