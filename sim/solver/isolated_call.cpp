// fork + pipe + poll: the child computes, the parent waits with a deadline and reaps it.
#include "isolated_call.h"

#include <poll.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

#include "../schedule/error.h"

namespace zb {

namespace {

bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

IsolatedResult run_isolated(const std::function<std::string()>& work, double timeout_s) {
  int fds[2];
  if (::pipe(fds) != 0) throw Error(std::string("zb-ilp: pipe failed: ") + std::strerror(errno));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(std::string("zb-ilp: fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    int code = 0;
    try {
      const std::string bytes = work();
      if (!write_all(fds[1], bytes.data(), bytes.size())) code = 3;
    } catch (...) {
      code = 4;
    }
    ::close(fds[1]);
    ::_exit(code);  // no atexit handlers, no destructors of the parent's objects
  }
  ::close(fds[1]);
  IsolatedResult result;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                              std::chrono::duration<double>(timeout_s));
  bool eof = false;
  bool timed_out = false;
  char buffer[1 << 16];
  while (!eof) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    pollfd waiting{fds[0], POLLIN, 0};
    const int ready = ::poll(&waiting, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      eof = true;
    } else {
      result.bytes.append(buffer, static_cast<std::size_t>(n));
    }
  }
  ::close(fds[0]);
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    result.end = IsolatedEnd::timed_out;
    result.bytes.clear();
  } else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    result.end = IsolatedEnd::finished;
  } else {
    result.end = IsolatedEnd::crashed;
    result.bytes.clear();
  }
  return result;
}

}  // namespace zb
