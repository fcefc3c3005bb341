// A trace file (zbsim's and zbexec's own JSON) reads or is an InputError, and what reads has
// metrics computed again.
#include "sim/support/json_text.h"
#include "sim/core/trace.h"
#include "sim/formats/trace_json.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return zb::fuzz::only_input_errors([&] {
    const nlohmann::json object = zb::parse_json(zb::fuzz::text(data, size), "fuzz");
    const zb::Trace trace = zb::trace_from_json(object, "fuzz");
    if (trace.spans.size() > zb::fuzz::kMaxActions) return;
    zb::compute_metrics(trace, trace.metrics.work);
    zb::to_json(trace);
  });
}
