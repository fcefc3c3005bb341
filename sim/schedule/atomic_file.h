// Writes a whole file or nothing: a temporary beside it, then rename. Symlinks are followed (the
// target is written, the link stays); devices, FIFOs and terminals are written in place.
#pragma once

#include <string>
#include <string_view>

namespace zb {

// Throws InputError naming the path when it cannot be written (a directory, a missing folder, no
// permission); no temporary is left behind.
void write_file_atomically(const std::string& path, std::string_view content);
// Throws InputError naming the path when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace zb
