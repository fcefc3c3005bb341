// An Nsight Systems SQLite export reads into ranks and a trace, or is an InputError: whatever
// SQLite makes of the bytes (a damaged page, a table of the wrong shape, a view) never crashes.
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "sim/formats/nsys_report.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // SQLite reads files: the input becomes one, private to this process.
  static const std::string path = "/tmp/zb_fuzz_nsys_" + std::to_string(::getpid()) + ".sqlite";
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                               static_cast<std::streamsize>(size));
  return zb::fuzz::only_input_errors([&] {
    const zb::NsysReport report = zb::read_nsys_report(path);
    if (report.ranges.size() + report.kernels.size() > zb::fuzz::kMaxActions) return;
    const std::vector<zb::ProfiledRank> ranks = zb::nsys_profiled_ranks(report);
    zb::profiled_trace(ranks);
  });
}
