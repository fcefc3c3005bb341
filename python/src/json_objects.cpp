// Python objects to and from JSON values.
#include "json_objects.h"

#include <fmt/format.h>

#include <string>

#include "sim/support/error.h"
#include "sim/support/json_text.h"

namespace py = pybind11;

namespace zb::python {

namespace {

// Python's json module defines what a JSON-able object is (and writes floats in their shortest
// round-trip form); the text then goes through the project's one JSON parser.
std::string dumps(const py::handle& object, std::string_view what) {
  try {
    return py::module_::import("json").attr("dumps")(object, py::arg("allow_nan") = false).cast<std::string>();
  } catch (const py::error_already_set& e) {
    throw InputError(fmt::format("{}: not a JSON value: {}", what, e.what()));
  }
}

template <typename Json>
py::object json_to_python(const Json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return py::none();
    case nlohmann::json::value_t::boolean:
      return py::bool_(value.template get<bool>());
    case nlohmann::json::value_t::number_integer:
      return py::int_(value.template get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return py::int_(value.template get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return py::float_(value.template get<double>());
    case nlohmann::json::value_t::string:
      return py::str(value.template get_ref<const std::string&>());
    case nlohmann::json::value_t::array: {
      py::list list(value.size());
      std::size_t i = 0;
      for (const auto& item : value) list[i++] = json_to_python(item);
      return list;
    }
    case nlohmann::json::value_t::object: {
      py::dict dict;
      for (const auto& [key, item] : value.items()) dict[py::str(key)] = json_to_python(item);
      return dict;
    }
    default:  // binary and discarded values never come out of our writers
      return py::none();
  }
}

}  // namespace

nlohmann::ordered_json ordered_json_from_python(const py::handle& object, std::string_view what) {
  return parse_ordered_json(dumps(object, what), what);
}

nlohmann::json json_from_python(const py::handle& object, std::string_view what) { return parse_json(dumps(object, what), what); }

py::object python_from_json(const nlohmann::json& value) { return json_to_python(value); }
py::object python_from_json(const nlohmann::ordered_json& value) { return json_to_python(value); }

}  // namespace zb::python
