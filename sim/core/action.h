// One pass of one microbatch on one stage, and its text token (F3, B3, W3, BW3, O3, L3, F3.1); an
// overlapped pair of actions and its token "(F7;BW3.1)".
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zb {

// F: forward; B: input-gradient backward; W: weight-gradient backward; BW: fused full backward.
// O: offload of the activations one F left (to host memory, on the device's copy engine beside
// compute); L: their reload before the backward that needs them (PipeOffload, Wan et al. 2025).
// O and L are copies, not compute: the device's compute does not wait for them, except the
// backward of what was offloaded, which waits for its reload.
enum class Pass : std::uint8_t { F, B, W, BW, O, L };

inline constexpr int kPassCount = 6;

std::string_view pass_name(Pass pass);
// The pass pass_name spells `name`, if any.
std::optional<Pass> pass_from_name(std::string_view name);

// O and L: work of the device's copy engine, not of its compute.
inline bool is_copy(Pass pass) { return pass == Pass::O || pass == Pass::L; }

// An action names its chunk (local to the device that runs it), not its stage: the stage follows
// from the device and the problem's placement (Problem::stage_of).
//
// overlap_next: this action and the next one on the same device run together as one overlapped
// block (DualPipe's F&B: a forward of one chunk with a backward of the other, so that one's
// communication hides under the other's compute). Every consumer that only needs the order sees
// two ordinary actions; timing (pass_time.h), drawing and the text forms treat the pair as one.
// The validator owns which pairs are allowed (an F, then a B or BW).
struct Action {
  Pass pass = Pass::F;
  std::int32_t microbatch = 0;
  std::int32_t chunk = 0;
  bool overlap_next = false;

  friend bool operator==(const Action&, const Action&) = default;
};

// "F3", "B3.1", "BW12" (chunk 0 omitted). Ignores overlap_next.
std::string to_token(const Action& action);

// Parses a token; throws InputError naming `context` and the token when it is malformed.
Action parse_token(std::string_view token, std::string_view context);

// A device's list as tokens: one per action, "(F7;BW3.1)" for an overlapped pair.
std::vector<std::string> to_tokens(std::span<const Action> actions);

// Appends the actions of one token of to_tokens' form: one action, or the two of "(a;b)" (the
// first with overlap_next). Throws InputError naming `context` when it is malformed.
void append_token(std::vector<Action>& out, std::string_view token, std::string_view context);

}  // namespace zb
