// PyTorch's pipeline CSV (compute-only and with communication cells) reads or is an InputError,
// and what reads writes back in both forms.
#include "sim/formats/pytorch_csv.h"
#include "tests/fuzz/fuzz_support.h"
#include "tests/testing/problems.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return zb::fuzz::only_input_errors([&] {
    const zb::ImportedSchedule imported = zb::parse_pytorch_csv(zb::fuzz::text(data, size), "fuzz");
    if (imported.schedule.action_count() > zb::fuzz::kMaxActions) return;
    const zb::Problem problem = zb::testing::imported_spec(imported).build("fuzz");
    zb::to_pytorch_csv(problem, imported.schedule);
    zb::to_pytorch_csv(problem, imported.schedule, zb::PytorchCsvForm::compute_comms);
  });
}
