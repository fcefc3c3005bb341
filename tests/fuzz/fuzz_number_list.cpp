// The flag values users type: number lists ("1,2.5,3"), memory limits ("2p"), placements.
#include "sim/core/problem.h"
#include "sim/core/problem_spec.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = zb::fuzz::text(data, size);
  zb::fuzz::only_input_errors([&] { zb::parse_number_list(text, "--tf"); });
  zb::fuzz::only_input_errors([&] { zb::MemoryLimit::parse(text, "--mem-limit").to_string(); });
  zb::fuzz::only_input_errors([&] { zb::parse_placement(text, "--placement"); });
  return 0;
}
