// Small input files read once per process: preset and cluster files that one command (a plan
// search, a sweep) resolves hundreds of times.
#pragma once

#include <string>

namespace zb {

// The text of `path` as read_file (atomic_file.h) gives it, from memory when this process has read
// it before and its size and modification time are unchanged (a stat, not an open); an edited file
// (a preset changed while zbview runs) is read again. Errors are read_file's; they are not kept.
// Safe to call from several threads.
std::string read_file_kept(const std::string& path);

}  // namespace zb
