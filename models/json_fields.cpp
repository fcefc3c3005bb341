// Typed field access for preset objects; every error names the source, the field and the value.
#include "models/detail/json_fields.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <vector>

#include "models/errors.h"

namespace zb::models {

void check_known_fields(const nlohmann::json& object, const std::vector<std::string_view>& known,
                        std::string_view source) {
  for (const auto& item : object.items()) {
    bool found = false;
    for (const auto name : known) found = found || item.key() == name;
    if (!found) {
      throw InputError(fmt::format("{}: unknown field '{}' (known: {})", source, item.key(), fmt::join(known, ", ")));
    }
  }
}

void check_known_fields(const nlohmann::json& object, std::initializer_list<std::string_view> known,
                        std::string_view source) {
  check_known_fields(object, std::vector<std::string_view>(known), source);
}

namespace {

const nlohmann::json& required(const nlohmann::json& object, std::string_view key, std::string_view source) {
  const auto it = object.find(key);
  if (it == object.end()) throw InputError(fmt::format("{}: missing field '{}'", source, key));
  return *it;
}

int as_int(const nlohmann::json& value, std::string_view key, std::string_view source, int min_value) {
  const bool integral = value.is_number_integer() ||
                        (value.is_number_float() && std::floor(value.get<double>()) == value.get<double>());
  if (!integral || value.get<double>() < min_value || value.get<double>() > 1e9) {
    throw InputError(fmt::format("{}: field '{}' is {}: expected an integer >= {}", source, key, value.dump(),
                                 min_value));
  }
  return static_cast<int>(value.get<double>());
}

double as_number(const nlohmann::json& value, std::string_view key, std::string_view source, double min_value) {
  if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < min_value) {
    throw InputError(fmt::format("{}: field '{}' is {}: expected a number >= {}", source, key, value.dump(),
                                 min_value));
  }
  return value.get<double>();
}

}  // namespace

int int_field(const nlohmann::json& object, std::string_view key, std::string_view source, int min_value) {
  return as_int(required(object, key, source), key, source, min_value);
}

int int_field_or(const nlohmann::json& object, std::string_view key, std::string_view source, int min_value,
                 int fallback) {
  const auto it = object.find(key);
  return it == object.end() ? fallback : as_int(*it, key, source, min_value);
}

double number_field(const nlohmann::json& object, std::string_view key, std::string_view source, double min_value) {
  return as_number(required(object, key, source), key, source, min_value);
}

double number_field_or(const nlohmann::json& object, std::string_view key, std::string_view source,
                       double min_value, double fallback) {
  const auto it = object.find(key);
  return it == object.end() ? fallback : as_number(*it, key, source, min_value);
}

double fraction_field_or(const nlohmann::json& object, std::string_view key, std::string_view source,
                         double fallback) {
  const auto it = object.find(key);
  if (it == object.end()) return fallback;
  if (!it->is_number() || !(it->get<double>() > 0 && it->get<double>() <= 1)) {
    throw InputError(fmt::format("{}: field '{}' is {}: expected a fraction in (0, 1]", source, key, it->dump()));
  }
  return it->get<double>();
}

std::string string_field_or(const nlohmann::json& object, std::string_view key, std::string_view source,
                            std::string fallback) {
  const auto it = object.find(key);
  if (it == object.end()) return fallback;
  if (!it->is_string()) {
    throw InputError(fmt::format("{}: field '{}' is {}: expected a string", source, key, it->dump()));
  }
  return it->get<std::string>();
}

bool bool_field_or(const nlohmann::json& object, std::string_view key, std::string_view source, bool fallback) {
  const auto it = object.find(key);
  if (it == object.end()) return fallback;
  if (!it->is_boolean()) {
    throw InputError(fmt::format("{}: field '{}' is {}: expected true or false", source, key, it->dump()));
  }
  return it->get<bool>();
}

}  // namespace zb::models
