// The metrics table: one row per trace, the memory-limit status, and simulated-vs-measured differences.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "tests/gui/gui_test_support.h"
#include "gui/viewer_core/explorer_run.h"
#include "gui/viewer_core/metrics_table.h"
#include "gui/viewer_core/timeline_layout.h"
#include "sim/app/catalog/generators.h"

namespace zb::view {
namespace {

using testing::evaluated;
using testing::uniform_spec;

TEST(MetricsTable, OneRowPerGroupWithSpanBubbleRatePeakAndStepTime) {
  TimelineScene scene;
  scene.add(make_group("1f1b", evaluated("1f1b", uniform_spec(4, 8)), std::nullopt));
  scene.add(make_group("zb-h1", evaluated("zb-h1", uniform_spec(4, 8)), std::nullopt));
  const auto rows = metrics_rows(scene);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].label, "1f1b");
  EXPECT_EQ(rows[0].engine, "eval");
  EXPECT_EQ(rows[0].status, "ok");
  EXPECT_DOUBLE_EQ(*rows[0].span, 33);
  EXPECT_NEAR(*rows[0].bubble_rate, (33.0 - 24.0) / 33.0, 1e-12);
  EXPECT_DOUBLE_EQ(*rows[1].span, 27);
  EXPECT_NEAR(*rows[1].bubble_rate, 3.0 / 27.0, 1e-12);
  EXPECT_DOUBLE_EQ(*rows[0].peak_memory, 4);  // 1F1B keeps p microbatches live on device 0
  EXPECT_GE(*rows[0].step_time, *rows[0].span);
  EXPECT_TRUE(rows[0].reference.empty());
}

// A torch.profiler run records no memory: its row has no peak (an empty cell), not a peak of 0.
TEST(MetricsTable, ATraceWithoutMemoryHasNoPeak) {
  TimelineScene scene;
  Trace profiled = evaluated("1f1b", uniform_spec(4, 8));
  for (auto& timeline : profiled.memory) timeline.clear();
  scene.add(make_group("profiled", profiled, std::nullopt));
  const auto rows = metrics_rows(scene);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_FALSE(rows[0].peak_memory.has_value());
  EXPECT_TRUE(rows[0].span.has_value());
}

TEST(MetricsTable, FlagsASchedulePastTheMemoryLimit) {
  TimelineScene scene;
  scene.add(make_group("zb-h2", evaluated("zb-h2", uniform_spec(4, 8)), 4.0));
  const auto rows = metrics_rows(scene);
  EXPECT_NE(rows[0].status.find("over-limit: d"), std::string::npos) << rows[0].status;
}

TEST(MetricsTable, MeasuredTraceIsComparedWithTheSimulatedOnePerDevice) {
  TimelineScene scene;
  const Trace simulated = evaluated("zb-h1", uniform_spec(4, 8));
  Trace measured = simulated;
  measured.meta.engine = "cpu";
  // A measured run where device 2 is 10% slower in everything after t = 0.
  for (Span& span : measured.spans) {
    if (span.device == 2) {
      span.start *= 1.1;
      span.end *= 1.1;
    }
  }
  measured.metrics = compute_metrics(measured, simulated.metrics.work);
  scene.add(make_group("zb-h1", simulated, std::nullopt));
  scene.add(make_group("zb-h1 (cpu, run.json)", measured, std::nullopt));
  const auto rows = metrics_rows(scene);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(rows[0].reference.empty());
  EXPECT_EQ(rows[1].reference, "zb-h1");
  ASSERT_EQ(rows[1].span_delta.size(), 4u);
  EXPECT_DOUBLE_EQ(rows[1].span_delta[0], 0);
  EXPECT_NEAR(rows[1].span_delta[2], simulated.metrics.device_span[2] * 0.1, 1e-9);
  EXPECT_NE(rows[1].span_delta_text.find("+0 +0 +"), std::string::npos) << rows[1].span_delta_text;
  // The span (first start to last end over all devices) grows by what device 2's late end adds.
  EXPECT_NEAR(rows[1].span_relative, measured.metrics.span / simulated.metrics.span - 1, 1e-12);
  EXPECT_GT(rows[1].span_relative, 0.01);
  const std::string tsv = to_tsv(rows);
  EXPECT_NE(tsv.find(fmt::format("span +{:.1f}% vs zb-h1; per device +0 +0 +", 100 * rows[1].span_relative)),
            std::string::npos)
      << tsv;
}

// A measured trace read beside the simulated file of its run: that file is the reference, not the
// explorer's group of the same name (whose costs are the panel's); the explorer's own SimGrid run
// still compares with the explorer's evaluator run.
TEST(MetricsTable, AMeasuredFileIsComparedWithTheSimulatedFileBesideIt) {
  const Trace unit_costs = evaluated("zb-h1", uniform_spec(4, 8));
  const Trace simulated_file = evaluated("zb-h1", uniform_spec(4, 8, 20, 22, 15));
  Trace measured = simulated_file;
  measured.meta.engine = "cuda";
  for (Span& span : measured.spans) span.end += 0.5;  // every pass 0.5 ms slower than simulated
  measured.metrics = compute_metrics(measured, simulated_file.metrics.work);
  Trace simgrid = unit_costs;
  simgrid.meta.engine = "simgrid";

  TimelineScene scene;
  auto add = [&](std::string label, const Trace& trace, bool from_file) {
    TraceGroup group = make_group(std::move(label), trace, std::nullopt);
    group.from_file = from_file;
    scene.add(std::move(group));
  };
  add("zb-h1 (cuda, run.json)", measured, true);
  add("zb-h1 (eval, sim.json)", simulated_file, true);
  add("zb-h1", unit_costs, false);
  add("zb-h1 (SimGrid)", simgrid, false);
  EXPECT_EQ(reference_group(scene, 0), 1);
  EXPECT_EQ(reference_group(scene, 1), -1);  // simulated: no reference
  EXPECT_EQ(reference_group(scene, 3), 2);
  const auto rows = metrics_rows(scene);
  EXPECT_EQ(rows[0].reference, "zb-h1 (eval, sim.json)");
  for (std::size_t d = 0; d < 4; ++d) {
    EXPECT_NEAR(rows[0].span_delta[d], measured.metrics.device_span[d] - simulated_file.metrics.device_span[d], 1e-9);
  }
  EXPECT_LT(std::abs(rows[0].span_relative), 0.05);  // not the +125 of a unit-cost comparison
  EXPECT_EQ(rows[3].reference, "zb-h1");

  // Without the simulated file, the explorer's group of the same pipeline is the reference.
  TimelineScene alone;
  alone.add(scene.groups()[0]);
  alone.add(scene.groups()[2]);
  EXPECT_EQ(reference_group(alone, 0), 1);
}

TEST(MetricsTable, OnlyTheSamePipelineIsAReferenceAndUnitsAreConverted) {
  const Trace simulated = evaluated("zb-h1", uniform_spec(4, 8));
  Trace measured = evaluated("zb-h1", uniform_spec(4, 6));
  measured.meta.engine = "cpu";
  TimelineScene scene;
  scene.add(make_group("zb-h1 (cpu)", measured, std::nullopt));
  scene.add(make_group("zb-h1", simulated, std::nullopt));
  EXPECT_EQ(reference_group(scene, 0), -1);  // m = 6 against m = 8: not the same run
  EXPECT_TRUE(metrics_rows(scene)[0].reference.empty());

  // A torch.profiler run names no schedule: it matches on the pipeline; its us become ms.
  Trace profiled = simulated;
  profiled.meta.engine = "torch.profiler";
  profiled.meta.schedule.clear();
  profiled.meta.time_unit = TimeUnit::us;
  for (Span& span : profiled.spans) {
    span.start *= 2000;  // twice the simulated times, in us
    span.end *= 2000;
  }
  profiled.metrics = compute_metrics(profiled, simulated.metrics.work * 2000);
  TimelineScene run;
  run.add(make_group("trace (torch.profiler, rank0.json)", profiled, std::nullopt));
  run.add(make_group("zb-h1", simulated, std::nullopt));
  const auto rows = metrics_rows(run);
  ASSERT_EQ(rows[0].reference, "zb-h1");
  EXPECT_NEAR(rows[0].span_delta[0], simulated.metrics.device_span[0], 1e-9);
  EXPECT_NEAR(rows[0].span_relative, 1.0, 1e-12);
}

TEST(MetricsTable, FailedSchedulesAreRowsWithAStatus) {
  const auto registry = catalog::generators();
  const Problem problem = uniform_spec(4, 8).build();
  const RunResult interleaved = run_generator(registry, "1f1b-i", problem);  // needs v >= 2
  EXPECT_FALSE(interleaved.trace);
  EXPECT_FALSE(interleaved.error.empty());
  const RunResult unknown = run_generator(registry, "no-such", problem);
  EXPECT_FALSE(unknown.trace);
  EXPECT_NE(unknown.error.find("no-such"), std::string::npos);
  const MetricsRow row = failed_row("1f1b-i", interleaved.error);
  EXPECT_FALSE(row.span);
  EXPECT_EQ(row.status, interleaved.error);
}

TEST(ExplorerRun, EvaluatesAndKeepsTheLimitForTheChart) {
  ProblemSpec spec = uniform_spec(4, 8);
  spec.mem_limit = MemoryLimit{1, true};
  const RunResult result = run_generator(catalog::generators(), "zb-h2", spec.build());
  ASSERT_TRUE(result.trace) << result.error;  // over the limit, still drawn
  ASSERT_TRUE(result.memory_limit);
  EXPECT_DOUBLE_EQ(*result.memory_limit, 4);
  EXPECT_EQ(result.trace->meta.schedule, "zb-h2");
}

TEST(ExplorerRun, ADeadlockedScheduleIsAnErrorNotAnException) {
  Schedule schedule = parse_schedule_text("d0: F0 BW0\nd1: BW0 F0\n", "deadlock.txt");
  schedule.name = "deadlock.txt";
  const RunResult result = run_schedule(uniform_spec(2, 1).build(), schedule);
  EXPECT_FALSE(result.trace);
  EXPECT_FALSE(result.error.empty());
}

TEST(ExplorerRun, SpecIsReshapedToASchedulesDevicesMicrobatchesAndChunks) {
  ProblemSpec spec = uniform_spec(4, 8);
  spec.t_f = {1, 2, 3, 4};
  const Schedule schedule = parse_schedule_text("d0: F0 F1 BW0 BW1\nd1: F0 BW0 F1 BW1\n", "two.txt");
  const ProblemSpec fitted = spec_fitting_schedule(spec, schedule);
  EXPECT_EQ(fitted.devices, 2);
  EXPECT_EQ(fitted.microbatches, 2);
  EXPECT_EQ(fitted.chunks, 1);
  EXPECT_EQ(fitted.t_f, std::vector<double>{1});  // a per-device array of 4 cannot describe 2 devices
  const RunResult result = run_schedule(fitted.build(), schedule);
  EXPECT_TRUE(result.trace) << result.error;
}

TEST(ExplorerRun, OnlyTheIlpRunsInTheBackground) {
  const GeneratorRegistry& registry = catalog::generators();
  for (const std::string& name : registry.names()) {
    EXPECT_EQ(registry.get(name).long_running, name == "zb-ilp") << name;
  }
}

}  // namespace
}  // namespace zb::view

namespace zb::view {
namespace {

// With the SimGrid part built, its idealised network must reproduce the evaluator's times, so the
// explorer's comparison column reads all zeros for it.
TEST(Engines, SimgridIdealMatchesTheEvaluatorWhenBuilt) {
  const auto engines = viewer_engines(testing::source_path("models/clusters"));
  ASSERT_FALSE(engines.empty());
  EXPECT_TRUE(engines[0].is_evaluator());
  if (engines.size() == 1) GTEST_SKIP() << "built without SimGrid";
  EXPECT_NE(engines[1].label.find("ideal"), std::string::npos);
  EXPECT_GT(engines.size(), 2u);  // the cluster presets of models/clusters
  const Problem problem = uniform_spec(4, 8, 1, 1, 1, 0.25).build();
  const RunResult eval = run_generator(catalog::generators(), "zb-h1", problem);
  const RunResult sim = run_generator(catalog::generators(), "zb-h1", problem, engines[1].run);
  ASSERT_TRUE(sim.trace) << sim.error;
  EXPECT_EQ(sim.trace->meta.engine, "simgrid");
  TimelineScene scene;
  scene.add(make_group("zb-h1", *eval.trace, std::nullopt));
  scene.add(make_group("zb-h1 (SimGrid)", *sim.trace, std::nullopt));
  const auto rows = metrics_rows(scene);
  ASSERT_EQ(rows[1].reference, "zb-h1");
  for (double delta : rows[1].span_delta) EXPECT_NEAR(delta, 0, 1e-9);
}

}  // namespace
}  // namespace zb::view

namespace zb::view {
namespace {

TEST(MetricsTable, NoiseLevelDifferencesReadAsZero) {
  TimelineScene scene;
  const Trace simulated = evaluated("zb-h1", uniform_spec(4, 8));
  Trace other = simulated;
  other.meta.engine = "simgrid";
  for (Span& span : other.spans) span.end += 3e-15;
  other.metrics = compute_metrics(other, simulated.metrics.work);
  scene.add(make_group("zb-h1", simulated, std::nullopt));
  scene.add(make_group("zb-h1 (SimGrid)", other, std::nullopt));
  EXPECT_EQ(metrics_rows(scene)[1].span_delta_text, "+0 +0 +0 +0");
  // The engine is not repeated in the header when the label already names it.
  EXPECT_EQ(group_title(scene.groups()[1]).find("[simgrid]"), std::string::npos);
}

}  // namespace
}  // namespace zb::view
