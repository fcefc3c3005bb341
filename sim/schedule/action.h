// One pass of one microbatch on one stage, and its text token (F3, B3, W3, BW3, F3.1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace zb {

// F: forward; B: input-gradient backward; W: weight-gradient backward; BW: fused full backward.
enum class Pass : std::uint8_t { F, B, W, BW };

inline constexpr int kPassCount = 4;

std::string_view pass_name(Pass pass);

// An action names its chunk (local to the device that runs it), not its stage: the stage follows
// from the device and the problem's placement (Problem::stage_of).
struct Action {
  Pass pass = Pass::F;
  std::int32_t microbatch = 0;
  std::int32_t chunk = 0;

  friend bool operator==(const Action&, const Action&) = default;
};

// "F3", "B3.1", "BW12" (chunk 0 omitted).
std::string to_token(const Action& action);

// Parses a token; throws InputError naming `context` and the token when it is malformed.
Action parse_token(std::string_view token, std::string_view context);

}  // namespace zb
