// Runs a computation in a forked child with a hard wall-clock deadline (crash- and hang-proof).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace zb {

enum class IsolatedEnd { finished, timed_out, crashed };

struct IsolatedResult {
  IsolatedEnd end = IsolatedEnd::crashed;
  std::string bytes;  // what `work` returned, when finished
};

// Forks; the child runs `work` and sends its bytes back through a pipe, then _exits. The parent
// waits at most `timeout_s` seconds, then kills the child. Used for CBC, whose own time limit is
// CPU-based and not checked everywhere, and which can crash when stopped early (docs/design.md section 13).
IsolatedResult run_isolated(const std::function<std::string()>& work, double timeout_s);

}  // namespace zb
