// A sweep grid reads (axes, schedules, engines, every axis value checked once) or is an
// InputError. The reader takes a path, so each input goes through a file in memory.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "sim/support/atomic_file.h"
#include "sim/app/sweep/grid.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/dev/shm/zb-fuzz-grid-" + std::to_string(::getpid()) + ".json";
  zb::write_file_atomically(path, zb::fuzz::text(data, size));
  zb::fuzz::only_input_errors([&] {
    const zb::sweep::Grid grid = zb::sweep::load_grid(path);
    if (grid.size() > 0) grid.point(grid.size() - 1);
  });
  std::remove(path.c_str());
  return 0;
}
