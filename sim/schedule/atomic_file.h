// Writes a whole file or nothing: a temporary beside it, then rename.
#pragma once

#include <string>
#include <string_view>

namespace zb {

// Throws InputError naming the path when it cannot be written.
void write_file_atomically(const std::string& path, std::string_view content);
// Throws InputError naming the path when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace zb
