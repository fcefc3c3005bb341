// Reading typed fields of preset JSON objects with errors that name the source and the field.
#pragma once

#include <nlohmann/json.hpp>

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace zb::models {

// Throws InputError "<source>: unknown field 'x' (known: ...)" for a key outside `known`.
void check_known_fields(const nlohmann::json& object, std::initializer_list<std::string_view> known,
                        std::string_view source);
void check_known_fields(const nlohmann::json& object, const std::vector<std::string_view>& known,
                        std::string_view source);

// Required fields throw "<source>: missing field 'x'"; wrong types and out-of-range values throw
// "<source>: field 'x' is <value>: expected ...".
int int_field(const nlohmann::json& object, std::string_view key, std::string_view source, int min_value);
int int_field_or(const nlohmann::json& object, std::string_view key, std::string_view source, int min_value,
                 int fallback);
double number_field(const nlohmann::json& object, std::string_view key, std::string_view source, double min_value);
double number_field_or(const nlohmann::json& object, std::string_view key, std::string_view source,
                       double min_value, double fallback);
// A number in (0, 1].
double fraction_field_or(const nlohmann::json& object, std::string_view key, std::string_view source,
                         double fallback);
std::string string_field_or(const nlohmann::json& object, std::string_view key, std::string_view source,
                            std::string fallback);
bool bool_field_or(const nlohmann::json& object, std::string_view key, std::string_view source, bool fallback);

}  // namespace zb::models
