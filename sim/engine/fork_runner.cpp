// fork + pipe + waitpid, with the child's exception carried back as a tagged message.
#include "fork_runner.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <csignal>

#include "error.h"

namespace zb::engine {

namespace {

// Message tags: the first byte of what the child writes.
constexpr char kOk = 'O';
constexpr char kScheduleError = 'S';
constexpr char kInputError = 'I';
constexpr char kError = 'E';
constexpr char kOther = 'X';

void write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      return;  // the parent went away; nothing useful left to do
    }
    data += written;
    size -= static_cast<std::size_t>(written);
  }
}

[[noreturn]] void child_main(int fd, const std::function<std::string()>& body, bool quiet) {
  // Other threads' pipes (parallel sweeps) must not stay open here, or their readers would wait
  // for this child too before seeing end-of-file.
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
  char tag = kOk;
  std::string payload;
  try {
    payload = body();
  } catch (const ScheduleError& error) {
    tag = kScheduleError;
    payload = error.what();
  } catch (const InputError& error) {
    tag = kInputError;
    payload = error.what();
  } catch (const Error& error) {
    tag = kError;
    payload = error.what();
  } catch (const std::exception& error) {
    tag = kOther;
    payload = error.what();
  } catch (...) {
    tag = kOther;
    payload = "unknown exception";
  }
  const std::uint64_t size = payload.size();
  write_all(fd, &tag, 1);
  write_all(fd, reinterpret_cast<const char*>(&size), sizeof size);
  write_all(fd, payload.data(), payload.size());
  ::close(fd);
  // No exit handlers, no static destructors: SimGrid's teardown is not needed in a throwaway child.
  ::_exit(0);
}

}  // namespace

std::string run_in_child(const std::function<std::string()>& body, bool quiet) {
  int fds[2];
  if (::pipe(fds) != 0) throw Error(fmt::format("SimGrid engine: cannot create a pipe: {}", std::strerror(errno)));
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(fmt::format("SimGrid engine: cannot fork the simulation process: {}", std::strerror(errno)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(fds[1], body, quiet);
  }
  ::close(fds[1]);
  // Read everything before waiting: a large trace does not fit in the pipe buffer.
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t got = ::read(fds[0], buffer, sizeof buffer);
    if (got < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (got == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }

  constexpr std::size_t kHeader = 1 + sizeof(std::uint64_t);
  std::uint64_t size = 0;
  if (bytes.size() >= kHeader) std::memcpy(&size, bytes.data() + 1, sizeof size);
  if (bytes.size() < kHeader || bytes.size() != kHeader + size) {
    if (WIFSIGNALED(status)) {
      const int signal = WTERMSIG(status);
      throw Error(fmt::format("SimGrid engine: the simulation process died with signal {} ({}); rerun with --verbose "
                              "to see SimGrid's messages",
                              signal, ::strsignal(signal)));
    }
    throw Error(fmt::format("SimGrid engine: the simulation process exited (status {}) without a complete result",
                            WIFEXITED(status) ? WEXITSTATUS(status) : -1));
  }
  std::string payload = bytes.substr(kHeader);
  switch (bytes[0]) {
    case kOk: return payload;
    case kScheduleError: throw ScheduleError(payload);
    case kInputError: throw InputError(payload);
    case kError: throw Error(payload);
    default: throw Error(fmt::format("SimGrid engine: internal failure: {}", payload));
  }
}

}  // namespace zb::engine
