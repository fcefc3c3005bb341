// fork + pipe + poll + waitpid (see child_process.h).
#include "sim/support/child_process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include "sim/support/error.h"

namespace zb {

bool write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

ChildProcess spawn_child(const std::function<int(int write_fd)>& body, bool quiet) {
  int fds[2];
  if (::pipe(fds) != 0) throw Error(fmt::format("cannot create a pipe: {}", std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(fmt::format("cannot fork a child process: {}", std::strerror(error)));
  }
  if (pid == 0) {
    // Everything but 0-2 and the write end goes, the read end included.
    const int fd = fds[1];
    if (fd > 3) ::close_range(3, static_cast<unsigned>(fd - 1), 0);
    ::close_range(static_cast<unsigned>(fd + 1), ~0U, 0);
    if (quiet) {
      const int null_fd = ::open("/dev/null", O_WRONLY);
      if (null_fd >= 0) {
        ::dup2(null_fd, STDOUT_FILENO);
        ::dup2(null_fd, STDERR_FILENO);
        ::close(null_fd);
      }
    }
    int code = 70;
    try {
      code = body(fd);
    } catch (...) {
      code = 70;
    }
    ::close(fd);
    ::_exit(code);
  }
  ::close(fds[1]);
  return {pid, fds[0]};
}

int reap_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

std::string ChildResult::describe() const {
  switch (end) {
    case End::exited: return fmt::format("exited with status {}", exit_code);
    case End::signalled: return fmt::format("died with signal {} ({})", signal, ::strsignal(signal));
    case End::timed_out: return "was stopped at its deadline";
  }
  return "ended";
}

ChildResult run_in_child(const std::function<int(int write_fd)>& body, bool quiet, std::optional<double> timeout_s) {
  const ChildProcess child = spawn_child(body, quiet);
  const auto deadline =
      std::chrono::steady_clock::now() +
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(timeout_s.value_or(0)));
  ChildResult result;
  bool timed_out = false;
  char buffer[1 << 16];
  // Read everything before reaping: a large result does not fit in the pipe buffer.
  for (;;) {
    int wait_ms = -1;
    if (timeout_s) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        timed_out = true;
        break;
      }
      wait_ms = static_cast<int>(std::min<long long>(left.count(), 1000));
    }
    pollfd waiting{child.fd, POLLIN, 0};
    const int ready = ::poll(&waiting, 1, wait_ms);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(child.fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.bytes.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(child.fd);
  if (timed_out) ::kill(child.pid, SIGKILL);
  const int status = reap_child(child.pid);
  if (timed_out) {
    result.end = ChildResult::End::timed_out;
    result.bytes.clear();
  } else if (WIFSIGNALED(status)) {
    result.end = ChildResult::End::signalled;
    result.signal = WTERMSIG(status);
  } else {
    result.end = ChildResult::End::exited;
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  return result;
}

}  // namespace zb
