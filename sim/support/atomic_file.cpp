// Whole-file writes via a temporary and rename, so a failure never leaves half a file; special
// files and symlinks are written through, never replaced.
#include "sim/support/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "sim/support/child_process.h"
#include "sim/support/error.h"

namespace zb {

namespace {

namespace fs = std::filesystem;

// What a path names once its symlinks are followed (the link itself stays a link); a dangling
// link names the file it points to.
fs::path resolve_links(const fs::path& path) {
  fs::path current = path;
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code error;
    if (!fs::is_symlink(fs::symlink_status(current, error))) return current;
    const fs::path target = fs::read_symlink(current, error);
    if (error) return current;
    current = target.is_absolute() ? target : current.parent_path() / target;
  }
  throw InputError(fmt::format("{}: too many levels of symbolic links", path.string()));
}

// The descriptor a path names when it is a name for one of this process's open descriptors
// (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N). Resolving such a link by its text gives
// "pipe:[1234]" for a pipe and the shell's file for `> out`, which a rename would replace (and
// `>> out` would lose what was there); the descriptor itself is written instead, as the shell set
// it up: a pipe, a terminal, a file at its offset or in append mode.
std::optional<int> named_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return STDOUT_FILENO;
  if (path == "/dev/stderr") return STDERR_FILENO;
  for (const std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) continue;
    int fd = 0;
    for (std::size_t i = prefix.size(); i < path.size(); ++i) {
      if (path[i] < '0' || path[i] > '9' || fd > 100'000'000) return std::nullopt;
      fd = fd * 10 + (path[i] - '0');
    }
    return fd;
  }
  return std::nullopt;
}

// Throws the InputError for a named descriptor that is not open for writing.
void check_descriptor_writable(const std::string& path, int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  const int mode = flags & O_ACCMODE;
  if (mode != O_WRONLY && mode != O_RDWR) {
    throw InputError(fmt::format("{}: cannot write: descriptor {} is open for reading only", path, fd));
  }
}

// The temporaries being written, so that SIGINT, SIGTERM or SIGHUP removes them before the process
// ends (unlink is async-signal-safe; the slots are lock-free). A write beyond the slots' count
// proceeds unregistered: commands write a handful of files at once.
std::array<std::atomic<char*>, 64> g_live_temporaries{};

extern "C" void remove_temporaries_and_reraise(int signal) {
  for (auto& slot : g_live_temporaries) {
    if (char* name = slot.load()) ::unlink(name);
  }
  std::signal(signal, SIG_DFL);  // then end as the signal would have ended the process
  std::raise(signal);
}

void install_cleanup_once() {
  static const bool installed = [] {
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction current {};
      // A handler the program set itself (MPI, SimGrid, a caller) is left alone.
      if (::sigaction(signal, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
        struct sigaction cleanup {};
        cleanup.sa_handler = remove_temporaries_and_reraise;
        sigemptyset(&cleanup.sa_mask);
        ::sigaction(signal, &cleanup, nullptr);
      }
    }
    return true;
  }();
  (void)installed;
}

// A temporary's name held in a slot while it exists.
class LiveTemporary {
 public:
  explicit LiveTemporary(const std::string& name) {
    install_cleanup_once();
    char* copy = ::strdup(name.c_str());
    for (auto& slot : g_live_temporaries) {
      char* empty = nullptr;
      if (copy && slot.compare_exchange_strong(empty, copy)) {
        slot_ = &slot;
        return;
      }
    }
    std::free(copy);
  }
  ~LiveTemporary() {
    if (slot_) std::free(slot_->exchange(nullptr));
  }
  LiveTemporary(const LiveTemporary&) = delete;
  LiveTemporary& operator=(const LiveTemporary&) = delete;

 private:
  std::atomic<char*>* slot_ = nullptr;
};

// Unique per process and call, so two writers of one path never share a temporary.
std::string temporary_name(const fs::path& target) {
  static std::atomic<unsigned long> counter{0};
  return fmt::format("{}.tmp-zbsim-{}-{}", target.string(), ::getpid(), counter++);
}

void write_in_place(const std::string& path, std::string_view content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
  const bool written = write_all(fd, content);
  const int saved = errno;
  ::close(fd);
  if (!written) throw InputError(fmt::format("{}: write failed: {}", path, std::strerror(saved)));
}

// One output on its way: a file's complete temporary, waiting for its rename, or a descriptor or
// device written at commit time (nothing can be staged there).
struct Staged {
  std::string path;
  std::string_view content;
  std::optional<int> descriptor;
  bool in_place = false;
  fs::path target;
  std::string temporary;
  std::unique_ptr<LiveTemporary> live;
};

void stage(Staged& out) {
  if ((out.descriptor = named_descriptor(out.path))) {
    check_descriptor_writable(out.path, *out.descriptor);
    return;
  }
  std::error_code error;
  const fs::file_status status = fs::status(out.path, error);  // the kernel follows the links
  if (fs::is_directory(status)) throw InputError(fmt::format("{}: is a directory", out.path));
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // A device, FIFO or terminal (/dev/null, a pipe): written as it is, since replacing it by a
    // file would break it (and, as root, the machine's /dev/null).
    out.in_place = true;
    return;
  }
  out.target = resolve_links(out.path);
  out.temporary = temporary_name(out.target);
  out.live = std::make_unique<LiveTemporary>(out.temporary);
  const int fd = ::open(out.temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) {
    out.temporary.clear();
    throw InputError(fmt::format("{}: cannot write: {}", out.path, std::strerror(errno)));
  }
  const bool written = write_all(fd, out.content);
  const int saved = errno;
  if (::close(fd) != 0 || !written) throw InputError(fmt::format("{}: write failed: {}", out.path, std::strerror(saved)));
}

void commit(Staged& out) {
  if (out.descriptor) {
    if (!write_all(*out.descriptor, out.content)) {
      throw InputError(fmt::format("{}: write failed: {}", out.path, std::strerror(errno)));
    }
  } else if (out.in_place) {
    write_in_place(out.path, out.content);
  } else if (std::rename(out.temporary.c_str(), out.target.c_str()) != 0) {
    throw InputError(fmt::format("{}: cannot write: {}", out.path, std::strerror(errno)));
  } else {
    out.temporary.clear();  // renamed: nothing left to remove
  }
}

// Every output staged, then every one committed; on any failure no temporary is left.
void write_staged(std::vector<Staged>& staged) {
  try {
    for (Staged& out : staged) stage(out);
    for (Staged& out : staged) commit(out);
  } catch (...) {
    for (Staged& out : staged) {
      if (!out.temporary.empty()) std::remove(out.temporary.c_str());
    }
    throw;
  }
}

}  // namespace

void write_files_atomically(std::span<const FileContent> files) {
  std::vector<Staged> staged(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    staged[i].path = files[i].path;
    staged[i].content = files[i].content;
  }
  write_staged(staged);
}

void write_file_atomically(const std::string& path, std::string_view content) {
  std::vector<Staged> staged(1);
  staged[0].path = path;
  staged[0].content = content;  // not copied: the caller's text is written as it is
  write_staged(staged);
}

void check_writable(const std::string& path) {
  if (const std::optional<int> fd = named_descriptor(path)) {
    check_descriptor_writable(path, *fd);
    return;
  }
  const fs::path target = resolve_links(path);
  std::error_code error;
  const fs::file_status status = fs::status(target, error);
  if (fs::is_directory(status)) throw InputError(fmt::format("{}: is a directory", path));
  const fs::path folder = target.has_parent_path() ? target.parent_path() : fs::path(".");
  // An existing file is written in place or replaced in its folder; a new one is created there.
  const bool ok = fs::exists(status) ? ::access(target.c_str(), W_OK) == 0 &&
                                           (!fs::is_regular_file(status) || ::access(folder.c_str(), W_OK) == 0)
                                     : ::access(folder.c_str(), W_OK | X_OK) == 0;
  if (!ok) throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
}

namespace {

// The file's bytes up to `most`; past them, InputError when `refuse_more`, else they are not read.
std::string read_up_to(const std::string& path, std::size_t most, bool refuse_more) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::string text;
  char buffer[1 << 16];
  for (;;) {
    const std::size_t want = refuse_more ? sizeof buffer : std::min(sizeof buffer, most - text.size());
    if (want == 0) break;
    const ssize_t got = ::read(fd, buffer, want);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      const int saved = errno;
      ::close(fd);
      throw InputError(fmt::format("{}: cannot read: {}", path, std::strerror(saved)));
    }
    if (got == 0) break;
    if (text.size() + static_cast<std::size_t>(got) > most) {
      ::close(fd);
      throw InputError(fmt::format("{}: larger than the input size limit of {} MiB (is it the right file?)", path,
                                   most >> 20));
    }
    text.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return text;
}

}  // namespace

std::string read_file(const std::string& path) { return read_up_to(path, kMaxInputBytes, true); }

std::string read_file_head(const std::string& path, std::size_t bytes) { return read_up_to(path, bytes, false); }

}  // namespace zb
