// Text tokens of actions: F3, B3, W3, BW3, O3, L3, F3.1, and overlapped pairs "(F7;BW3.1)".
#include "sim/core/action.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>

#include "sim/support/error.h"

namespace zb {

std::string_view pass_name(Pass pass) {
  switch (pass) {
    case Pass::F: return "F";
    case Pass::B: return "B";
    case Pass::W: return "W";
    case Pass::BW: return "BW";
    case Pass::O: return "O";
    case Pass::L: return "L";
  }
  return "?";
}

std::optional<Pass> pass_from_name(std::string_view name) {
  for (int k = 0; k < kPassCount; ++k) {
    if (pass_name(static_cast<Pass>(k)) == name) return static_cast<Pass>(k);
  }
  return std::nullopt;
}

namespace {

// Tokens are spelled by hand rather than with fmt::format: the text forms of schedules with
// hundreds of thousands of actions are written token by token (and short tokens stay in the
// string's own buffer).
void append_number(std::string& out, std::int32_t value) {
  char digits[16];
  const auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
  out.append(digits, end);
}

void append_one(std::string& out, const Action& action) {
  out += pass_name(action.pass);
  append_number(out, action.microbatch);
  if (action.chunk != 0) {
    out += '.';
    append_number(out, action.chunk);
  }
}

}  // namespace

std::string to_token(const Action& action) {
  std::string token;
  append_one(token, action);
  return token;
}

namespace {

std::optional<Pass> single_letter_pass(char letter) {
  switch (letter) {
    case 'F': return Pass::F;
    case 'B': return Pass::B;
    case 'W': return Pass::W;
    case 'O': return Pass::O;
    case 'L': return Pass::L;
    default: return std::nullopt;
  }
}

bool parse_non_negative(std::string_view digits, std::int32_t& out) {
  if (digits.empty()) return false;
  const auto* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, out);
  return ec == std::errc{} && ptr == end && out >= 0;
}

}  // namespace

Action parse_token(std::string_view token, std::string_view context) {
  Action action;
  std::string_view rest = token;
  if (rest.starts_with("BW")) {
    action.pass = Pass::BW;
    rest.remove_prefix(2);
  } else if (const auto pass = rest.empty() ? std::nullopt : single_letter_pass(rest[0])) {
    action.pass = *pass;
    rest.remove_prefix(1);
  } else {
    throw InputError(fmt::format("{}: bad action '{}': expected F, B, W, BW, O (offload) or L (reload) "
                                 "then a microbatch number, e.g. F3, BW3, B3.1, O3.1",
                                 context, token));
  }
  const auto dot = rest.find('.');
  const bool ok = parse_non_negative(rest.substr(0, dot), action.microbatch) &&
                  (dot == std::string_view::npos ||
                   parse_non_negative(rest.substr(dot + 1), action.chunk));
  if (!ok) {
    throw InputError(fmt::format(
        "{}: bad action '{}': expected a microbatch number and an optional .chunk, e.g. F3 or "
        "F3.1",
        context, token));
  }
  return action;
}

std::vector<std::string> to_tokens(std::span<const Action> actions) {
  std::vector<std::string> tokens;
  tokens.reserve(actions.size());
  for (std::size_t i = 0; i < actions.size(); ++i) {
    std::string& token = tokens.emplace_back();
    if (actions[i].overlap_next && i + 1 < actions.size()) {
      token += '(';
      append_one(token, actions[i]);
      token += ';';
      append_one(token, actions[++i]);
      token += ')';
    } else {
      append_one(token, actions[i]);
    }
  }
  return tokens;
}

void append_token(std::vector<Action>& out, std::string_view token, std::string_view context) {
  if (!token.starts_with('(')) {
    out.push_back(parse_token(token, context));
    return;
  }
  const auto semicolon = token.find(';');
  if (!token.ends_with(')') || semicolon == std::string_view::npos ||
      token.find(';', semicolon + 1) != std::string_view::npos) {
    throw InputError(fmt::format("{}: bad overlapped pair '{}': expected two actions like (F7;BW3.1)", context,
                                 token));
  }
  Action first = parse_token(token.substr(1, semicolon - 1), context);
  first.overlap_next = true;
  out.push_back(first);
  out.push_back(parse_token(token.substr(semicolon + 1, token.size() - semicolon - 2), context));
}

}  // namespace zb
