// SimGrid traces in Chrome form: transfers that share links overlap in time in their own ways, and
// still no thread of the file has overlapping slices and every flow binds (issue 15 item 4).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/simgrid/cluster.h"
#include "sim/simgrid/simgrid_engine.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/formats/trace_writers.h"
#include "tests/testing/chrome_trace_check.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

TEST(SimgridChromeTrace, NoThreadHasOverlappingSlicesAndEveryFlowIsBound) {
  struct Case {
    std::string schedule;
    Problem problem;
    bool cluster;  // finite links (transfers contend) or the ideal network
  };
  Problem linear = testing::uniform_problem(8, 16, 1, 1, 1, 0.2);
  Problem looped = testing::uniform_problem(8, 16, 1, 1, 1, 0.2, 2);
  Problem v = testing::v_problem(8, 16, 1, 1, 1, 0.2);
  for (Problem* problem : {&linear, &looped, &v}) problem->bytes_act = 2e8;  // 0.44 ms on NVLink
  const std::vector<Case> cases = {
      {"zb-h1", linear, true},
      {"1f1b-i", looped, true},
      {"zb-v-h", v, true},
      {"1f1b-i", testing::uniform_problem(32, 64, 1, 1, 1, 0.2, 2), false},
  };
  const ClusterSpec nvlink = load_cluster_file(testing::source_path("models/clusters/1x8-nvlink.json"));
  int lanes_beyond_one = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.schedule + (c.cluster ? " on 1x8-nvlink" : " ideal"));
    SimgridOptions options;
    if (c.cluster) options.cluster = nvlink;
    options.steps = 2;
    const Trace trace =
        simulate_simgrid(c.problem, generate(GeneratorRegistry::with_builtins(), c.schedule, c.problem), options);
    const auto file = nlohmann::json::parse(to_chrome_trace({{c.schedule, &trace}}));
    const testing::ChromeTraceCheck check = testing::check_chrome_trace(file);
    testing::expect_readable_as_intended(check);
    EXPECT_GT(check.flows, 0);
    EXPECT_EQ(check.flow_points, 3 * check.flows);  // producer, recv, consumer
    for (const auto& event : file["traceEvents"]) {
      if (event["ph"] == "M" && event["name"] == "thread_name") {
        lanes_beyond_one += event["args"]["name"].get<std::string>().find(" 2/") != std::string::npos ? 1 : 0;
      }
    }
  }
  EXPECT_GT(lanes_beyond_one, 0);  // the runs did have concurrent transfers to separate
}

}  // namespace
}  // namespace zb
