// The --devices flag of the CUDA backend: real GPUs (cuda:0,1,2,3) or N stages on one GPU (virtual:N).
#include "exec/cuda/detail/device_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "sim/support/error.h"

namespace zb::exec::cuda {

namespace {

bool parse_int(std::string_view text, int& out) {
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && ptr == text.data() + text.size() && out >= 0;
}

[[noreturn]] void bad(std::string_view text, std::string_view why) {
  throw InputError(fmt::format("--devices '{}': {} (expected cuda:0,1,... or virtual:N[@GPU])", text, why));
}

}  // namespace

std::string DeviceSet::describe() const {
  if (kind == Kind::virtual_gpu) return fmt::format("virtual:{} on cuda:{}", count, ordinals.at(0));
  return fmt::format("cuda:{}", fmt::join(ordinals, ","));
}

DeviceSet parse_device_set(std::string_view text, int devices) {
  DeviceSet set;
  if (devices < 1) throw InputError(fmt::format("--p {}: need at least 1 device", devices));
  if (text.empty()) {
    for (int d = 0; d < devices; ++d) set.ordinals.push_back(d);
    set.count = devices;
    return set;
  }
  if (text.substr(0, 5) == "cuda:") {
    std::string_view rest = text.substr(5);
    while (true) {
      const auto comma = rest.find(',');
      int ordinal = 0;
      if (!parse_int(rest.substr(0, comma), ordinal)) bad(text, "a GPU number is missing or not a number");
      if (std::find(set.ordinals.begin(), set.ordinals.end(), ordinal) != set.ordinals.end()) {
        bad(text, fmt::format("GPU {} is listed twice (virtual:N runs several stages on one GPU)", ordinal));
      }
      set.ordinals.push_back(ordinal);
      if (comma == std::string_view::npos) break;
      rest = rest.substr(comma + 1);
    }
    set.count = static_cast<int>(set.ordinals.size());
  } else if (text.substr(0, 8) == "virtual:") {
    std::string_view rest = text.substr(8);
    const auto at = rest.find('@');
    int gpu = 0;
    if (!parse_int(rest.substr(0, at), set.count) || set.count < 1) bad(text, "N must be a number >= 1");
    if (at != std::string_view::npos && !parse_int(rest.substr(at + 1), gpu)) bad(text, "the GPU after @ must be a number");
    set.kind = DeviceSet::Kind::virtual_gpu;
    set.ordinals = {gpu};
  } else {
    bad(text, "unknown form");
  }
  if (set.count != devices) {
    throw InputError(fmt::format("--devices '{}' gives {} pipeline devices but --p is {}", text,
                                 set.count, devices));
  }
  return set;
}

}  // namespace zb::exec::cuda
