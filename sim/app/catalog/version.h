// The project version, from CMake's project(): what --version and Python's __version__ print.
#pragma once

namespace zb::catalog {

const char* version();

}  // namespace zb::catalog
