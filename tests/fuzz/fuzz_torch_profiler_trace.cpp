// A torch.profiler trace (Kineto's object or the legacy profiler's array of events) reads as one
// rank or is an InputError, and what reads merges into a trace whose metrics are computed again.
#include "sim/support/json_text.h"
#include "sim/formats/torch_profiler_trace.h"
#include "sim/core/trace.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return zb::fuzz::only_input_errors([&] {
    const nlohmann::json document = zb::parse_json(zb::fuzz::text(data, size), "fuzz");
    const zb::ProfiledRank rank = zb::read_profiled_rank(document, "fuzz");
    if (rank.actions.size() > zb::fuzz::kMaxActions) return;
    const zb::Trace trace = zb::profiled_trace({&rank, 1});
    zb::compute_metrics(trace, trace.metrics.work);
  });
}
