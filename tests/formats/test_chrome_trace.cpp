// Chrome traces as Perfetto and DevTools read them: lanes keep a thread's slices nested, every
// flow point binds to its slice, and the trace says what it is (metadata, steps, units, peers).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <regex>

#include "sim/core/evaluator.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/formats/detail/trace_lanes.h"
#include "sim/formats/trace_json.h"
#include "sim/formats/trace_writers.h"
#include "tests/testing/chrome_trace_check.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

Trace run(const Problem& problem, const std::string& schedule, int steps = 1,
          OptimizerMode mode = OptimizerMode::sync) {
  EvalOptions options;
  options.steps = steps;
  options.optimizer.mode = mode;
  return evaluate(problem, generate(GeneratorRegistry::with_builtins(), schedule, problem), options);
}

std::vector<const nlohmann::json*> events_named(const nlohmann::json& file, const std::string& ph,
                                                const std::string& name = "") {
  std::vector<const nlohmann::json*> out;
  for (const auto& event : file.at("traceEvents")) {
    if (event.at("ph") == ph && (name.empty() || event.value("name", "") == name)) out.push_back(&event);
  }
  return out;
}

TEST(TraceLanes, FewestLanesTouchingIntervalsShareIdenticalOnesDoNot) {
  // Two identical receives (the evaluator's at --tcomm 0.2), one that starts where they end.
  EXPECT_EQ(assign_lanes({{1, 2}, {1, 2}, {2, 3}}), (std::vector<int>{0, 1, 0}));
  // Staggered transfers: three open at once at t = 2.5, so three lanes; the freed lowest is reused.
  EXPECT_EQ(assign_lanes({{0, 3}, {1, 4}, {2, 5}, {3.5, 6}, {4, 4.5}}), (std::vector<int>{0, 1, 2, 0, 1}));
  // Input order does not matter, only the starts (ties in input order).
  EXPECT_EQ(assign_lanes({{2, 3}, {0, 1}, {0, 2}}), (std::vector<int>{0, 0, 1}));
  EXPECT_TRUE(assign_lanes({}).empty());
}

// The acceptance check of issue 15 item 4 for evaluator traces: linear, interleaved at p = 32 and
// V schedules, with transfers, several steps and overlapped pairs.
TEST(ChromeTrace, NoThreadHasOverlappingSlicesAndEveryFlowIsBound) {
  struct Case {
    std::string schedule;
    Problem problem;
    int steps;
    OptimizerMode mode;
  };
  Problem overlapped = testing::v_problem(4, 8, 1, 1, 1, 0.25);
  overlapped.overlap = 0.5;
  const std::vector<Case> cases = {
      {"1f1b", testing::uniform_problem(4, 8, 1, 1, 1, 0.2), 1, OptimizerMode::sync},
      {"zb-h1", testing::uniform_problem(4, 8, 1, 1, 1, 0.2), 3, OptimizerMode::post_validation},
      {"zb-h2", testing::uniform_problem(8, 16, 1, 2, 1, 0.5), 2, OptimizerMode::post_validation},
      {"1f1b-i", testing::uniform_problem(32, 64, 1, 1, 1, 0.2, 2), 3, OptimizerMode::sync},
      {"zb-v-h", testing::v_problem(4, 8, 1, 1, 1, 0.3), 2, OptimizerMode::post_validation},
      {"dualpipe-v", overlapped, 2, OptimizerMode::post_validation},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.schedule);
    const Trace trace = run(c.problem, c.schedule, c.steps, c.mode);
    const auto file = nlohmann::json::parse(to_chrome_trace({{c.schedule, &trace}}));
    const testing::ChromeTraceCheck check = testing::check_chrome_trace(file);
    testing::expect_readable_as_intended(check);
    // Every cross-device dependency is an arrow through its recv: 3 points each.
    const int p = c.problem.devices, m = c.problem.microbatches, stages = c.problem.stages();
    const int crossing = stages - 1 - (c.problem.placement == Placement::vshape ? 1 : 0);
    EXPECT_EQ(check.flows, 2 * crossing * m * c.steps);
    EXPECT_EQ(check.flow_points, 3 * check.flows);
    // Slices: every span, the overlapped blocks and a step slice per device and step.
    int blocks = 0;
    for (const Span& span : trace.spans) blocks += span.overlap_next ? 1 : 0;
    EXPECT_EQ(check.slices, static_cast<int>(trace.spans.size()) + blocks + p * c.steps);
    if (c.schedule == "dualpipe-v") {
      EXPECT_GT(blocks, 0);
    }
  }
}

TEST(ChromeTrace, ConcurrentTransfersGetTheirOwnLanes) {
  // At --tcomm 0.2 a device receives an activation and a gradient over the same interval.
  const Trace trace = run(testing::uniform_problem(4, 8, 1, 1, 1, 0.2), "zb-h1");
  const auto file = nlohmann::json::parse(to_chrome_trace({{"zb-h1", &trace}}));
  std::vector<std::string> recv_threads;
  for (const auto* event : events_named(file, "M", "thread_name")) {
    const std::string name = event->at("args").at("name");
    if ((*event)["pid"] == 1 && name.find("recv") != std::string::npos) recv_threads.push_back(name);
  }
  EXPECT_EQ(recv_threads, (std::vector<std::string>{"d1 recv 1/2", "d1 recv 2/2"}));
  EXPECT_EQ(testing::check_chrome_trace(file).unintended_nesting, 0);
}

TEST(ChromeTrace, SaysWhatItIsStepsUnitsAndPeers) {
  Problem problem = testing::uniform_problem(4, 8, 1, 1, 1, 0.5);
  problem.bytes_act = 4096;
  Trace trace = run(problem, "zb-h1", 3, OptimizerMode::post_validation);
  trace.meta.problem_json = R"({"p": 4, "m": 8, "t_f": 1, "t_b": 1, "t_w": 1, "t_comm": 0.5, "bytes_act": 4096})";
  const auto file = nlohmann::json::parse(to_chrome_trace({{"zb-h1", &trace}}));
  // The metadata event: schedule, engine, bubble, problem, step ends.
  const auto meta = events_named(file, "M", "zbsim_trace");
  ASSERT_EQ(meta.size(), 1u);
  const auto& args = meta[0]->at("args");
  EXPECT_EQ(args.at("schedule"), "zb-h1");
  EXPECT_EQ(args.at("engine"), "eval");
  EXPECT_DOUBLE_EQ(args.at("bubble_rate").get<double>(), trace.metrics.bubble_rate);
  EXPECT_EQ(args.at("problem").at("bytes_act"), 4096);
  EXPECT_EQ(args.at("step_ends").size(), 3u);
  EXPECT_EQ(args.at("memory_unit"), "M_B");
  // Step markers: a slice per device and step on its steps thread, a global marker per step end.
  EXPECT_EQ(events_named(file, "X", "step 2").size(), 4u);
  const auto ends = events_named(file, "i");
  ASSERT_EQ(ends.size(), 3u);
  EXPECT_EQ(ends[2]->at("name"), "zb-h1: step 2 end");
  EXPECT_EQ(ends[2]->at("s"), "g");
  EXPECT_DOUBLE_EQ(ends[2]->at("ts").get<double>(), trace.step_ends[2] * 1000);
  // The counter is named with its unit: M_B (mem_f = 1 per stage), Perfetto's "activation memory (M_B)".
  const auto counters = events_named(file, "C", "activation memory");
  ASSERT_FALSE(counters.empty());
  double peak = 0;
  for (const auto* c : counters) peak = std::max(peak, c->at("args").at("(M_B)").get<double>());
  EXPECT_DOUBLE_EQ(peak, trace.metrics.peak_memory[0]);
  // Transfers: peer device, what they carry, bytes, microbatch and chunk.
  const auto sends = events_named(file, "X", "send F3");
  ASSERT_EQ(sends.size(), 3u * 3u);  // stages 0..2 send F3's activation, each step
  const auto& send = *sends.front();
  EXPECT_EQ(send.at("pid"), 0);
  EXPECT_EQ(send.at("args").at("to_device"), 1);
  EXPECT_EQ(send.at("args").at("carries"), "activation");
  EXPECT_EQ(send.at("args").at("bytes"), 4096);
  EXPECT_EQ(send.at("args").at("microbatch"), 3);
  EXPECT_EQ(send.at("args").at("chunk"), 0);
  const auto recvs = events_named(file, "X", "recv B3");
  ASSERT_FALSE(recvs.empty());
  for (const auto* recv : recvs) {
    EXPECT_EQ(recv->at("args").at("from_device").get<int>(), recv->at("pid").get<int>() + 1);
  }
  // A unit the engine states wins (zbexec: bytes).
  trace.meta.memory_unit = "bytes";
  const auto bytes = nlohmann::json::parse(to_chrome_trace({{"zb-h1", &trace}}));
  EXPECT_TRUE(events_named(bytes, "C", "activation memory").front()->at("args").contains("(bytes)"));
}

TEST(ChromeTrace, TimesAreWholeNanosecondsAndTheFileIsByteIdentical) {
  const Problem problem = testing::uniform_problem(4, 8, 1, 1, 1, 0.2);
  const std::string a = [&] { const Trace t = run(problem, "zb-h1", 2); return to_chrome_trace({{"x", &t}}); }();
  const std::string b = [&] { const Trace t = run(problem, "zb-h1", 2); return to_chrome_trace({{"x", &t}}); }();
  EXPECT_EQ(a, b);
  // 0.2 ms is 200 us exactly, not 200.00000000000003.
  EXPECT_NE(a.find(R"("dur":200,)"), std::string::npos);
  for (const auto& event : nlohmann::json::parse(a).at("traceEvents")) {
    if (!event.contains("ts")) continue;
    const double ns = event.at("ts").get<double>() * 1000;
    EXPECT_NEAR(ns, std::round(ns), 1e-6);
  }
}

// Offload: the copies get their own thread per device in Chrome traces and their own strip
// under each device row in SVG; every step a trace holds is inside the SVG's time axis.
TEST(CopyLanes, ChromeAndSvgShowCopiesApartFromCompute) {
  ProblemSpec spec = testing::uniform_spec(4, 8, 1, 1, 1, 0, 2);
  spec.t_offload = {1};
  const Problem problem = spec.build();
  const Trace trace = run(problem, "po-h", 2);
  const auto file = nlohmann::json::parse(to_chrome_trace({{"po-h", &trace}}));
  bool copy_thread = false;
  for (const auto* event : events_named(file, "M", "thread_name")) {
    copy_thread |= event->at("args").at("name") == "d0 copy";
  }
  EXPECT_TRUE(copy_thread);
  const auto offloads = events_named(file, "X", "copy O0");
  ASSERT_FALSE(offloads.empty());
  EXPECT_FALSE(offloads.front()->at("args").contains("to_device"));  // a copy has no peer device
  const std::string svg = to_svg({{"po-h", &trace}});
  EXPECT_NE(svg.find("L reload"), std::string::npos);
  EXPECT_NE(svg.find("<title>O0 stage 0:"), std::string::npos);
  // Both steps lie inside the plot (1200 px wide, 16 px right margin): no box runs past it.
  EXPECT_GT(trace.spans.back().end, trace.metrics.makespan);
  const std::regex box(R"re(<rect x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)")re");
  int boxes = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), box); it != std::sregex_iterator(); ++it, ++boxes) {
    EXPECT_LE(std::stod((*it)[1]) + std::stod((*it)[2]), 1200 - 16 + 0.01) << (*it)[0];
  }
  EXPECT_GT(boxes, 100);
  // zbsim's own trace file keeps the copies (zbview and compare-trace read it back).
  const Trace back = trace_from_json(to_json(trace), "po-h.json");
  ASSERT_EQ(back.spans.size(), trace.spans.size());
  for (std::size_t i = 0; i < back.spans.size(); ++i) {
    EXPECT_EQ(back.spans[i].stream, trace.spans[i].stream);
    EXPECT_EQ(back.spans[i].pass, trace.spans[i].pass);
  }
}

}  // namespace
}  // namespace zb
