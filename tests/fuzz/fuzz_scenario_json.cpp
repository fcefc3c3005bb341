// A scenario file (problem, schedules, model-driven fields) reads or is an InputError.
#include "sim/app/catalog/scenario.h"
#include "sim/support/json_text.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return zb::fuzz::only_input_errors([&] {
    const nlohmann::json object = zb::parse_json(zb::fuzz::text(data, size), "fuzz.json");
    zb::Scenario scenario = zb::scenario_from_json(object, "fuzz.json", ".");
    zb::derive_model_costs(scenario);
    scenario.spec.build("fuzz.json");
  });
}
