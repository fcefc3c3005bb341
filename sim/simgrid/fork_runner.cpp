// A simulation in a forked child (child_process.h), its exception carried back as a tagged record.
#include "sim/simgrid/detail/fork_runner.h"

#include <fmt/format.h>

#include "sim/simgrid/detail/tagged_result.h"
#include "sim/support/child_process.h"
#include "sim/support/error.h"

namespace zb::engine {

std::string run_record_in_child(const std::function<std::string()>& record_body, bool quiet) {
  // No exit handlers, no static destructors: SimGrid's teardown is not needed in a throwaway child.
  const ChildResult child = zb::run_in_child([&](int fd) { return write_all(fd, record_body()) ? 0 : 1; }, quiet);
  if (!is_tagged_record(child.bytes)) {
    if (child.end == ChildResult::End::signalled) {
      throw Error(fmt::format("SimGrid engine: the simulation process {}; rerun with --verbose to see SimGrid's messages",
                              child.describe()));
    }
    throw Error(fmt::format("SimGrid engine: the simulation process {} without a complete result", child.describe()));
  }
  return untag_result(child.bytes);
}

std::string simulate_in_child(const std::function<std::string()>& body, bool quiet) {
  return run_record_in_child([&] { return tagged_result(body); }, quiet);
}

}  // namespace zb::engine
