// The text of small input files, kept per process (see kept_file.h).
#include "sim/support/kept_file.h"

#include <filesystem>
#include <map>
#include <mutex>

#include "sim/support/atomic_file.h"

namespace zb {

namespace {

struct Kept {
  std::uintmax_t size = 0;
  std::filesystem::file_time_type written;
  std::string text;
};

}  // namespace

std::string read_file_kept(const std::string& path) {
  namespace fs = std::filesystem;
  static std::mutex mutex;
  static std::map<std::string, Kept> kept;
  std::error_code error;
  const std::string key = fs::absolute(path, error).string();
  const std::uintmax_t size = error ? 0 : fs::file_size(path, error);
  const fs::file_time_type written = error ? fs::file_time_type{} : fs::last_write_time(path, error);
  // Not a regular file, or gone: read_file says why (or reads a device), and nothing is kept.
  if (error || !fs::is_regular_file(path, error)) return read_file(path);
  {
    const std::lock_guard lock(mutex);
    if (auto found = kept.find(key); found != kept.end() && found->second.size == size && found->second.written == written) {
      return found->second.text;
    }
  }
  std::string text = read_file(path);
  const std::lock_guard lock(mutex);
  kept.insert_or_assign(key, Kept{size, written, text});
  return text;
}

}  // namespace zb
