// Whole-file writes via a temporary and rename, so a failure never leaves half a file.
#include "sim/schedule/atomic_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "sim/schedule/error.h"

namespace zb {

void write_file_atomically(const std::string& path, std::string_view content) {
  const std::string temporary = path + ".tmp-zbsim";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(fmt::format("{}: cannot write: {}", path, std::strerror(errno)));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      std::remove(temporary.c_str());
      throw InputError(fmt::format("{}: write failed", path));
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temporary.c_str());
    throw InputError(fmt::format("{}: cannot write: {}", path, reason));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace zb
