// Reading JSON (sim/support/json_text.h) against the length of the document: trace-like files of
// 10k to 1M spans (an array of small objects, as zbsim's traces and torch.profiler's files are),
// parsed by zbsim's reader (depth limit, duplicate keys refused), by nlohmann's plain parser (no
// checks, the floor) and, up to 100k spans, by nlohmann's callback parser, which zbsim used for the
// depth limit before and whose time grows with the square of the length. One table, one run each:
//
//   ./bench/zb_bench_json_read [--max-spans N]
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <string_view>

#include "sim/support/json_text.h"

namespace {

std::string trace_text(int spans) {
  std::string text = R"({"meta": {"p": 64, "m": 512}, "spans": [)";
  for (int i = 0; i < spans; ++i) {
    if (i > 0) text += ",\n";
    text += fmt::format(R"({{"device": {}, "kind": "F", "microbatch": {}, "chunk": 0, "start": {}, "end": {}}})",
                        i % 64, i / 64, 1.25 * i, 1.25 * i + 1.0);
  }
  text += "]}\n";
  return text;
}

template <typename Parse>
double seconds(Parse&& parse) {
  const auto start = std::chrono::steady_clock::now();
  parse();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  int max_spans = 1'000'000;
  if (argc == 3 && std::string_view(argv[1]) == "--max-spans") max_spans = std::atoi(argv[2]);
  fmt::print("{:>9} {:>8} {:>12} {:>14} {:>10} {:>16}\n", "spans", "MB", "zbsim (s)", "nlohmann (s)", "ratio",
             "callback (s)");
  for (int spans = 10'000; spans <= max_spans; spans *= 10) {
    const std::string text = trace_text(spans);
    std::size_t kept = 0;
    const double ours = seconds([&] { kept += zb::parse_json(text, "bench")["spans"].size(); });
    const double plain = seconds([&] { kept += nlohmann::json::parse(text)["spans"].size(); });
    std::string callback = "-";
    if (spans <= 100'000) {
      auto all = [](int, nlohmann::detail::parse_event_t, const nlohmann::json&) { return true; };
      callback = fmt::format("{:.3f}", seconds([&] { kept += nlohmann::json::parse(text, all)["spans"].size(); }));
    }
    if (kept == 0) return 1;
    fmt::print("{:>9} {:>8.1f} {:>12.3f} {:>14.3f} {:>9.2f}x {:>16}\n", spans, static_cast<double>(text.size()) / 1e6, ours, plain,
               ours / plain, callback);
  }
  return 0;
}
