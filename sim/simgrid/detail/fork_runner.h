// Runs a simulation in a forked child and brings its bytes (or its exception) back through a pipe.
#pragma once

#include <functional>
#include <string>

namespace zb::engine {

// SimGrid allows one Engine per process, and its clock never resets: every simulation runs in
// its own child. The child runs `record_body`, which returns a record of tagged_result.h (the
// SimGrid module's answer), and sends it back; the payload is returned here, or the exception
// it carries (ScheduleError, InputError, Error) is rethrown with the same type and message. A
// child that dies (a SimGrid assertion, a signal) becomes a zb::Error naming the signal. With
// quiet, the child's stdout and stderr go to /dev/null. The fork itself is zb::run_in_child's
// (sim/support/child_process.h), which closes every inherited descriptor in the child.
std::string run_record_in_child(const std::function<std::string()>& record_body, bool quiet);

// The same for a body that returns its bytes or throws (tagged in the child).
std::string simulate_in_child(const std::function<std::string()>& body, bool quiet);

}  // namespace zb::engine
