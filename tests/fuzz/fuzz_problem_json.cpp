// A problem object (the "problem" of a scenario, or a sweep grid's base) reads and builds, or is
// an InputError naming the field.
#include "sim/support/json_text.h"
#include "sim/core/problem_spec.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return zb::fuzz::only_input_errors([&] {
    const nlohmann::json object = zb::parse_json(zb::fuzz::text(data, size), "fuzz");
    const zb::ProblemSpec spec = zb::problem_spec_from_json(object, "fuzz");
    const zb::Problem problem = spec.build("fuzz");
    zb::to_json(spec);
    problem.work();
  });
}
