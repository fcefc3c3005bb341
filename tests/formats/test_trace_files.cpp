// Trace JSON round trip, Chrome trace validity and the SVG timeline.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generators.h"
#include "tests/testing/problems.h"
#include "sim/formats/trace_json.h"
#include "sim/formats/trace_writers.h"

namespace zb {
namespace {

TEST(TraceJson, RoundTrip) {
  const Problem problem = testing::uniform_problem(3, 6, 1, 2, 0.5, 0.25);
  Trace trace = evaluate(problem, make_zb_h1(problem));
  trace.meta.problem_json = R"({"p":3})";
  const Trace back = trace_from_json(nlohmann::json::parse(to_json(trace).dump()), "t.json");
  ASSERT_EQ(back.spans.size(), trace.spans.size());
  for (std::size_t i = 0; i < trace.spans.size(); ++i) {
    EXPECT_EQ(back.spans[i].device, trace.spans[i].device);
    EXPECT_EQ(back.spans[i].stream, trace.spans[i].stream);
    EXPECT_EQ(back.spans[i].pass, trace.spans[i].pass);
    EXPECT_EQ(back.spans[i].microbatch, trace.spans[i].microbatch);
    EXPECT_DOUBLE_EQ(back.spans[i].start, trace.spans[i].start);
    EXPECT_DOUBLE_EQ(back.spans[i].end, trace.spans[i].end);
  }
  EXPECT_EQ(back.meta.schedule, "zb-h1");
  EXPECT_EQ(back.meta.problem_json, R"({"p":3})");
  EXPECT_DOUBLE_EQ(back.metrics.span, trace.metrics.span);
  EXPECT_DOUBLE_EQ(back.metrics.bubble_rate, trace.metrics.bubble_rate);
  EXPECT_EQ(back.metrics.peak_memory, trace.metrics.peak_memory);
  // Deterministic: same trace, byte-identical file.
  EXPECT_EQ(to_json(evaluate(problem, make_zb_h1(problem))).dump(),
            to_json(evaluate(problem, make_zb_h1(problem))).dump());
}

TEST(TraceJson, MalformedFilesNameTheProblem) {
  auto message = [](const std::string& text) {
    try {
      trace_from_json(nlohmann::json::parse(text), "bad.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message(R"({"spans": []})").find("missing field 'devices'"), std::string::npos);
  EXPECT_NE(message(R"({"devices": 2, "spans": [{"device": 5, "kind": "F", "stage": 0, "microbatch": 0,
      "start": 0, "end": 1}]})")
                .find("spans[0]: device 5 is outside 0..1"),
            std::string::npos);
  EXPECT_NE(message(R"({"devices": 1, "spans": [{"device": 0, "kind": "Q", "stage": 0, "microbatch": 0,
      "start": 0, "end": 1}]})")
                .find("unknown kind 'Q'"),
            std::string::npos);
  EXPECT_NE(message(R"({"devices": 1, "spans": [{"device": 0, "kind": "F", "stage": 0, "microbatch": 0,
      "start": 2, "end": 1}]})")
                .find("end 1 is before start 2"),
            std::string::npos);
}

TEST(ChromeTrace, ValidJsonWithProcessesThreadsFlowsAndCounters) {
  const Problem problem = testing::uniform_problem(4, 8, 1, 1, 1, 0.5);
  const Trace h1 = evaluate(problem, make_zb_h1(problem));
  const Trace f1b1 = evaluate(problem, make_1f1b(problem));
  const auto chrome = nlohmann::json::parse(to_chrome_trace({{"zb-h1", &h1}, {"1f1b", &f1b1}}));
  ASSERT_TRUE(chrome.contains("traceEvents"));
  int processes = 0, complete = 0, flow_starts = 0, flow_ends = 0, counters = 0;
  double first_ts = -1;
  for (const auto& event : chrome["traceEvents"]) {
    const std::string ph = event["ph"];
    if (ph == "M" && event["name"] == "process_name") ++processes;
    if (ph == "X") {
      ++complete;
      if (first_ts < 0 && event["tid"] == 0) first_ts = event["dur"].get<double>();
    }
    if (ph == "s") ++flow_starts;
    if (ph == "f") ++flow_ends;
    if (ph == "C") ++counters;
  }
  EXPECT_EQ(processes, 8);
  // Every span, and a step slice per device (one step each).
  EXPECT_EQ(complete, static_cast<int>(h1.spans.size() + f1b1.spans.size()) + 2 * 4);
  // One arrow per cross-device dependency: (p-1)*m forwards and (p-1)*m backwards per trace.
  EXPECT_EQ(flow_starts, 2 * 2 * 3 * 8);
  EXPECT_EQ(flow_ends, flow_starts);
  EXPECT_GT(counters, 0);
  EXPECT_DOUBLE_EQ(first_ts, 1000.0);  // 1 ms in microseconds
}

TEST(Svg, HasARowPerDeviceBoxesPerActionAndTheMetrics) {
  const Problem problem = testing::uniform_problem(4, 8, 1, 1, 1);
  const Trace trace = evaluate(problem, make_zb_h1(problem));
  const std::string svg = to_svg({{"zb-h1", &trace}});
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (auto pos = svg.find(needle); pos != std::string::npos; pos = svg.find(needle, pos + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count("<svg"), 1u);
  EXPECT_EQ(count("<title>"), trace.spans.size());
  EXPECT_EQ(count("fill=\"#F3D3D3\""), 4u + 1u);  // a pale idle row per device, plus the legend swatch
  EXPECT_GT(count("fill=\"#F58518\""), 0u);        // W boxes
  EXPECT_NE(svg.find("span 27 ms"), std::string::npos);
  EXPECT_NE(svg.find("bubble rate 11.11%"), std::string::npos);
}

}  // namespace
}  // namespace zb
