// Keyword arguments as problem fields.
#include "problem_arguments.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "json_objects.h"
#include "sim/app/catalog/scenario_input.h"
#include "sim/core/problem_fields.h"

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

// The text the flag would have: lists joined with commas, numbers as Python prints them.
std::string flag_text(const py::handle& value) {
  if (py::isinstance<py::str>(value)) return value.cast<std::string>();
  if (py::hasattr(value, "__iter__")) {
    std::string text;
    for (const py::handle item : value) text += (text.empty() ? "" : ",") + flag_text(item);
    return text;
  }
  return py::str(value).cast<std::string>();
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
    if (!value.is_none()) given.push_back({&field, flag_text(value)});
  }
  return catalog::apply_given_fields(std::move(scenario), given);
}

}  // namespace zb::python
