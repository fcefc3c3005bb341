// Parsing JSON that a user gave (a file, a flag): the one place that turns every parser failure
// into bad input naming the source.
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

namespace zb {

// Nesting deeper than this is refused before anything walks the document (a few thousand '['
// would overflow the stack of a recursive reader); real files nest fewer than 10 levels.
inline constexpr int kMaxJsonDepth = 256;

// Malformed text, a number out of a double's range ("1e400") or nesting deeper than
// kMaxJsonDepth throw InputError "SOURCE: malformed JSON: ...".
nlohmann::json parse_json(std::string_view text, std::string_view source);
nlohmann::ordered_json parse_ordered_json(std::string_view text, std::string_view source);

}  // namespace zb
