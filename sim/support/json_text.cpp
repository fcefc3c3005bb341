// JSON from users, with file-named errors and a depth limit (see json_text.h).
#include "sim/support/json_text.h"

#include <fmt/format.h>

#include "sim/support/error.h"

namespace zb {

namespace {

template <typename Json>
Json parse(std::string_view text, std::string_view source) {
  // The callback sees every value with its depth while the (iterative) parser reads it.
  auto limit = [&](int depth, nlohmann::detail::parse_event_t, const Json&) {
    if (depth > kMaxJsonDepth) {
      throw InputError(fmt::format("{}: malformed JSON: nested deeper than {} levels", source, kMaxJsonDepth));
    }
    return true;
  };
  try {
    return Json::parse(text, limit);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(fmt::format("{}: malformed JSON: {}", source, e.what()));
  }
}

}  // namespace

nlohmann::json parse_json(std::string_view text, std::string_view source) {
  return parse<nlohmann::json>(text, source);
}

nlohmann::ordered_json parse_ordered_json(std::string_view text, std::string_view source) {
  return parse<nlohmann::ordered_json>(text, source);
}

}  // namespace zb
