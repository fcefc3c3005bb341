// Writes a whole file or nothing: a temporary beside it, then rename. Symlinks are followed (the
// target is written, the link stays); devices, FIFOs and terminals are written in place, and the
// names of an open descriptor (/dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N) write to that
// descriptor as the shell opened it.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace zb {

// Throws InputError naming the path when it cannot be written (a directory, a missing folder, no
// permission); no temporary is left behind, also when SIGINT, SIGTERM or SIGHUP ends the process
// during the write (unless the program handles those signals itself).
void write_file_atomically(const std::string& path, std::string_view content);

struct FileContent {
  std::string path;
  std::string content;
};
// A command's outputs together: every file is written to its temporary first, and only when all
// are complete are they renamed into place, so a failure (or a signal) before that leaves every old
// file as it was and no temporary; the renames follow one another at the end.
void write_files_atomically(std::span<const FileContent> files);
// Throws the InputError that write_file_atomically would throw when `path` cannot be written (its
// folder is missing or not writable, it is a directory), without writing: a command checks every
// output before it writes the first, so a bad second output never leaves the first one written.
void check_writable(const std::string& path);

// The largest input file a reader takes: inputs are read whole and then parsed (a JSON document
// takes a few times its size in memory), so this bounds a reader near 1 GiB. The largest real
// inputs are traces, about 120 bytes per action: 256 MiB holds a trace of 2 million actions, and a
// schedule at the evaluator's limit (limits.h) is 60 MB as text.
inline constexpr std::size_t kMaxInputBytes = std::size_t{256} << 20;

// Throws InputError naming the path when it cannot be read or holds more than kMaxInputBytes
// (/dev/zero, a wrong file); stops reading there.
std::string read_file(const std::string& path);
// The first `bytes` of a file (all of it when shorter), to tell its kind without reading the rest;
// InputError when it cannot be read.
std::string read_file_head(const std::string& path, std::size_t bytes);

}  // namespace zb
