// A SimGrid cluster file reads and validates for a few device counts, or is an InputError.
#include "sim/simgrid/cluster.h"
#include "sim/support/json_text.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return zb::fuzz::only_input_errors([&] {
    const nlohmann::json object = zb::parse_json(zb::fuzz::text(data, size), "fuzz");
    const zb::ClusterSpec cluster = zb::cluster_from_json(object, "fuzz");
    for (int devices : {1, 4, 16}) cluster.validate("fuzz", devices);
  });
}
