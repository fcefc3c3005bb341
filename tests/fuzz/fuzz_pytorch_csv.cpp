// PyTorch's pipeline CSV (compute-only and with communication cells) reads or is an InputError,
// and what reads writes back.
#include "sim/schedule/problem_spec.h"
#include "sim/schedule/pytorch_csv.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return zb::fuzz::only_input_errors([&] {
    const zb::ImportedSchedule imported = zb::parse_pytorch_csv(zb::fuzz::text(data, size), "fuzz");
    if (imported.schedule.action_count() > zb::fuzz::kMaxActions) return;
    zb::ProblemSpec spec;
    spec.devices = imported.devices;
    spec.microbatches = imported.microbatches;
    spec.chunks = imported.chunks;
    spec.placement = imported.placement;
    spec.t_f = {1.0};
    spec.t_b = {1.0};
    spec.t_w = {1.0};
    zb::to_pytorch_csv(spec.build("fuzz"), imported.schedule);
  });
}
