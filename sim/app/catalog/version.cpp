// ZB_VERSION comes from sim/app/catalog/CMakeLists.txt (this file only, so a version bump rebuilds one file).
#include "sim/app/catalog/version.h"

namespace zb::catalog {

const char* version() { return ZB_VERSION; }

}  // namespace zb::catalog
