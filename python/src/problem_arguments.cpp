// Keyword arguments as problem fields.
#include "problem_arguments.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "json_objects.h"
#include "sim/app/catalog/scenario_input.h"
#include "sim/core/problem_fields.h"
#include "sim/support/error.h"

namespace py = pybind11;

namespace zb::python {

namespace {

std::string keyword_of(const ProblemField& field) {
  std::string flag(field.flag);
  for (char& c : flag) {
    if (c == '-') c = '_';
  }
  return flag;
}

// An int, or an integer type that says it is one (numpy's, by __index__); never a bool (True is 1
// to Python, and numpy's bool_ would pass __index__ in old versions).
bool is_bool(const py::handle& value) {
  return py::isinstance<py::bool_>(value) || py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>() == "bool_";
}
// A numpy array of one or more dimensions (its scalars have ndim 0).
bool is_array(const py::handle& value) {
  return py::hasattr(value, "dtype") && py::hasattr(value, "ndim") && value.attr("ndim").cast<int>() > 0;
}
bool is_integer(const py::handle& value) {
  return !is_bool(value) && !is_array(value) && (py::isinstance<py::int_>(value) || py::hasattr(value, "__index__"));
}
// Also a float, or a float type (numpy's float32 converts by __float__); not text.
bool is_number(const py::handle& value) {
  return is_integer(value) || py::isinstance<py::float_>(value) ||
         (!is_bool(value) && !is_array(value) && !py::isinstance<py::str>(value) && !py::isinstance<py::bytes>(value) &&
          py::hasattr(value, "__float__"));
}

// The text the flag would have (numbers as Python prints them, lists joined with commas), after
// the value's Python type is checked against the field's kind: bytes, bools, text for numbers and
// floats for whole numbers are a TypeError, not read through (b'4' iterated as [52]).
std::string flag_text(const ProblemField& field, const py::handle& value, std::string_view function,
                      const std::string& keyword) {
  auto refuse = [&](std::string_view expected) -> std::string {
    throw py::type_error(fmt::format("{}(): {} must be {}, got {} {}", function, keyword, expected,
                                     py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>(),
                                     py::repr(value).cast<std::string>().substr(0, 80)));
  };
  // As Python prints the plain int or float (numpy's types print alike, or as np.float64(1.5)).
  auto number_text = [](const py::handle& v) {
    if (py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v)) return py::str(v).cast<std::string>();
    return py::hasattr(v, "__index__") ? py::str(v.attr("__index__")()).cast<std::string>()
                                       : py::str(py::float_(py::reinterpret_borrow<py::object>(v))).cast<std::string>();
  };
  switch (field.kind) {
    case ProblemField::Kind::integer:
      return is_integer(value) ? number_text(value) : refuse("an int");
    case ProblemField::Kind::number:
      return is_number(value) ? number_text(value) : refuse("a number (int or float)");
    case ProblemField::Kind::numbers: {
      if (is_number(value)) return number_text(value);
      const bool array = is_array(value);
      if (!py::isinstance<py::list>(value) && !py::isinstance<py::tuple>(value) && !array) {
        return refuse("a number or a list of numbers");
      }
      // An array's tolist() is a list (nested past one dimension, whose items are then refused).
      const py::object items = array ? value.attr("tolist")() : py::reinterpret_borrow<py::object>(value);
      std::string text;
      for (const py::handle item : items) {
        if (!is_number(item)) return refuse("a number or a list of numbers (each an int or float)");
        text += (text.empty() ? "" : ",") + number_text(item);
      }
      return text;
    }
    case ProblemField::Kind::mem_limit:
      if (is_number(value)) return number_text(value);
      return py::isinstance<py::str>(value) ? value.cast<std::string>() : refuse("a number or a str such as '2p'");
    case ProblemField::Kind::placement:
    case ProblemField::Kind::time_unit:
      return py::isinstance<py::str>(value) ? value.cast<std::string>() : refuse("a str");
  }
  return refuse("a value");
}

// Whether `fields` names `field`, and by which `keyword`; TypeError when both spellings are there.
bool given_keyword(const py::kwargs& fields, const ProblemField& field, std::string_view function,
                          std::string& keyword) {
  const std::string key(field.key);
  const std::string flag = keyword_of(field);
  const bool by_key = fields.contains(key);
  const bool by_flag = flag != key && fields.contains(flag);
  if (by_key && by_flag) {
    throw py::type_error(fmt::format("{}(): {} and {} are the same field; give one", function, key, flag));
  }
  if (!by_key && !by_flag) return false;
  keyword = by_key ? key : flag;
  return true;
}

}  // namespace

bool gives_field(const py::kwargs& fields, std::string_view key) {
  const ProblemField* field = find_problem_field(key);
  if (!field) return false;
  for (const std::string& name : {std::string(field->key), keyword_of(*field)}) {
    if (fields.contains(name) && !fields[py::str(name)].is_none()) return true;
  }
  return false;
}

Scenario scenario_from_arguments(const py::object& scenario_arg, const py::kwargs& fields, std::string_view function) {
  std::vector<std::string> known;
  for (const ProblemField& field : problem_fields()) {
    known.emplace_back(field.key);
    known.push_back(keyword_of(field));
  }
  known.emplace_back("offload_chunks");  // a scenario's, not the problem's (zbsim --offload-chunks)
  for (const auto& [name, value] : fields) {
    const std::string keyword = py::str(name).cast<std::string>();
    if (std::find(known.begin(), known.end(), keyword) == known.end()) {
      throw py::type_error(fmt::format("{}(): unexpected keyword argument '{}' (problem fields: {})", function, keyword,
                                       problem_field_keys()));
    }
  }

  Scenario scenario;
  scenario.source = "command line";
  if (py::isinstance<py::dict>(scenario_arg)) {
    scenario = scenario_from_json(json_from_python(scenario_arg, "scenario"), "scenario", "");
  } else if (!scenario_arg.is_none()) {
    scenario = load_scenario(py::module_::import("os").attr("fspath")(scenario_arg).cast<std::string>());
  }
  // In the table's order, as zbsim applies its flags.
  std::vector<catalog::GivenField> given;
  for (const ProblemField& field : problem_fields()) {
    std::string keyword;
    if (!given_keyword(fields, field, function, keyword)) continue;
    const py::handle value = fields[py::str(keyword)];
    if (!value.is_none()) given.push_back({&field, flag_text(field, value, function, keyword)});
  }
  if (fields.contains("offload_chunks") && !fields["offload_chunks"].is_none()) {
    const py::handle value = fields["offload_chunks"];
    if (py::isinstance<py::bool_>(value) || !py::hasattr(value, "__index__")) {
      throw py::type_error(fmt::format("{}(): offload_chunks must be an int (chunks per device to offload), got {}",
                                       function, py::str(py::type::of(value).attr("__name__")).cast<std::string>()));
    }
    const long long chunks = value.attr("__index__")().cast<long long>();
    if (chunks < 0 || chunks > 1024) {
      throw zb::InputError(fmt::format("{}(): offload_chunks={}: expected 0..1024 (chunks per device to offload)", function,
                                   chunks));
    }
    scenario.offload_chunks = static_cast<int>(chunks);
  }
  return catalog::apply_given_fields(std::move(scenario), given);
}

}  // namespace zb::python
