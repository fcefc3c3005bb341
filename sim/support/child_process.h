// Forked children that send bytes back through a pipe: the one piece of process plumbing behind
// the SimGrid engine (one Engine per process), the CBC isolation (a hard wall-clock deadline) and
// the sweep's worker processes.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace zb {

// Writes all of `bytes`, retrying on EINTR; false when the reader has gone.
bool write_all(int fd, std::string_view bytes);

// A running child and the read end of its pipe.
struct ChildProcess {
  pid_t pid = -1;
  int fd = -1;
};

// Forks. The child closes every inherited descriptor except stdin, stdout, stderr and the
// write end of its pipe (other threads' pipes left open would keep their readers waiting for
// this child too), sends stdout and stderr to /dev/null when `quiet`, runs body(write_fd) and
// _exits with what it returns: no atexit handlers, no destructors of the parent's objects. An
// exception escaping `body` exits with 70. Flush stdio before calling, or buffered output is
// written twice.
ChildProcess spawn_child(const std::function<int(int write_fd)>& body, bool quiet);

// Waits for the child (retrying on EINTR) and returns its wait status.
int reap_child(pid_t pid);

struct ChildResult {
  enum class End { exited, signalled, timed_out };
  End end = End::exited;
  int exit_code = 0;  // when exited
  int signal = 0;     // when signalled
  std::string bytes;  // everything the child wrote before it ended (empty when timed out)

  bool succeeded() const { return end == End::exited && exit_code == 0; }
  std::string describe() const;  // "exited with status 3", "died with signal 11 (Segmentation fault)", ...
};

// spawn_child, read everything it writes, reap it. With a timeout, a child still running after
// `timeout_s` seconds of wall-clock time is killed (SIGKILL).
ChildResult run_in_child(const std::function<int(int write_fd)>& body, bool quiet,
                         std::optional<double> timeout_s = std::nullopt);

}  // namespace zb
