// The catalog: one generator list, one engine dispatcher, one schedule-file reader.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <set>

#include "sim/app/catalog/comparison.h"
#include "sim/app/catalog/engines.h"
#include "sim/app/catalog/frontier_curves.h"
#include "sim/app/catalog/generators.h"
#include "sim/app/catalog/result_json.h"
#include "sim/app/catalog/scenario_input.h"
#include "sim/app/catalog/schedule_files.h"
#include "sim/app/catalog/single_run.h"
#include "sim/app/catalog/solve_row.h"
#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/memory.h"
#include "sim/core/problem_fields.h"
#include "sim/formats/pytorch_csv.h"
#include "sim/core/validator.h"
#include "sim/solver/ilp_solver.h"
#include "tests/testing/input_error.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

using testing::error_of;

TEST(CatalogGenerators, TheHandcraftedAndTheSolversInOneList) {
  const std::vector<std::string> names = catalog::generators().names();
  for (const char* name : {"gpipe", "1f1b", "1f1b-i", "zb-h1", "zb-h2", "zb-auto", "zb-1p", "zb-2p"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
  }
  EXPECT_EQ(catalog::generators().find("zb-ilp") != nullptr, ilp_available());
  // Generated schedules say what they were made for.
  const Problem problem = testing::uniform_problem(4, 8, 1, 1, 1, 0, 2);
  const Schedule schedule = generate(catalog::generators(), "1f1b-i", problem);
  EXPECT_EQ(schedule.placement, Placement::interleaved);
  EXPECT_EQ(schedule.chunks, 2);
}

TEST(CatalogEngines, EvalAlwaysSimgridWhenBuilt) {
  const auto names = catalog::engine_names();
  ASSERT_FALSE(names.empty());
  EXPECT_EQ(names.front(), "eval");
  EXPECT_EQ(names.size() == 2, catalog::simgrid_available());
  catalog::EngineOptions options;
  options.engine = "ns3";
  EXPECT_NE(error_of([&] { catalog::check_engine_options(options); }).find("unknown engine 'ns3'"), std::string::npos);
  options.engine = "eval";
  options.cluster = "x.json";
  EXPECT_NE(error_of([&] { catalog::check_engine_options(options); }).find("--cluster applies to --engine simgrid only"),
            std::string::npos);
}

// Engines never refuse an over-limit schedule; every engine reports the same peaks.
TEST(CatalogEngines, AnOverLimitScheduleRunsOnEveryEngineWithTheSamePeaks) {
  ProblemSpec spec = testing::uniform_spec(4, 8);
  spec.mem_limit = MemoryLimit::parse("1p", "t");
  const Problem problem = spec.build();
  const Schedule gpipe = generate(catalog::generators(), "gpipe", problem);
  for (const std::string& engine : catalog::engine_names()) {
    catalog::EngineOptions options;
    options.engine = engine;
    const catalog::EngineRun run = catalog::run_engine(problem, gpipe, options);
    const auto over = first_over_limit(problem, run.trace.metrics.peak_memory);
    ASSERT_TRUE(over) << engine;
    EXPECT_EQ(over->reason(), "d0 peaks at 8 > limit 4 (1p)") << engine;
  }
}

TEST(CatalogScheduleFiles, TheFormatIsToldByContentNotByName) {
  const Problem problem = testing::uniform_problem(4, 8, 1, 1, 1);
  const Schedule zb_h1 = generate(catalog::generators(), "zb-h1", problem);
  // A PyTorch CSV without the .csv extension, our JSON without .json, the text form.
  const Schedule from_csv = catalog::parse_schedule_file(to_pytorch_csv(problem, zb_h1), "zbh1.txt");
  EXPECT_EQ(from_csv.devices, zb_h1.devices);
  EXPECT_EQ(from_csv.placement, Placement::linear);
  const Schedule from_json = catalog::parse_schedule_file(to_json(zb_h1).dump(), "schedule.txt");
  EXPECT_EQ(from_json.devices, zb_h1.devices);
  EXPECT_EQ(from_json.name, "zb-h1");
  const Schedule from_text = catalog::parse_schedule_file("# made by hand\n" + to_text(zb_h1), "s.csv");
  EXPECT_EQ(from_text.devices, zb_h1.devices);
  EXPECT_NE(error_of([] { catalog::parse_schedule_file("hello world\n", "h.txt"); }).find("h.txt:1: expected a line"),
            std::string::npos);
  EXPECT_NE(error_of([] { catalog::parse_schedule_file("{\"devices\": [", "b.json"); }).find("b.json: malformed JSON"),
            std::string::npos);
}

TEST(CatalogScheduleFiles, TheShapeComesFromTheFileAndAConflictNamesBoth) {
  const Schedule schedule =
      catalog::parse_schedule_file("placement: vshape\nchunks: 2\nd0: F0 F0.1 BW0.1 BW0\nd1: F0 F0.1 BW0.1 BW0\n", "v.txt");
  ProblemSpec open;
  catalog::apply_schedule_shape(schedule, open, "v.txt");
  EXPECT_EQ(open.devices, 2);
  EXPECT_EQ(open.microbatches, 1);
  EXPECT_EQ(open.chunks, 2);
  EXPECT_EQ(open.placement, Placement::vshape);
  ProblemSpec conflicting;
  conflicting.placement = Placement::interleaved;
  EXPECT_NE(error_of([&] { catalog::apply_schedule_shape(schedule, conflicting, "v.txt"); })
                .find("v.txt: the schedule says placement vshape but the problem says placement interleaved"),
            std::string::npos);
  ProblemSpec other_p;
  other_p.devices = 3;
  EXPECT_NE(error_of([&] { catalog::apply_schedule_shape(schedule, other_p, "v.txt"); })
                .find("the schedule has p=2 but the problem says 3"),
            std::string::npos);
}

// The same lists are valid as interleaved (span 9) and as V (span 8, one transfer fewer) at unit
// costs per device and t_comm 0.5; the header decides, where before interleaved was taken silently.
TEST(CatalogScheduleFiles, TheHeaderDecidesBetweenTwoValidReadings) {
  const std::string lists = "d0: F0 F0.1 BW0.1 BW0\nd1: F0 F0.1 BW0.1 BW0\n";
  auto span_of = [](const std::string& text) {
    const Schedule schedule = catalog::parse_schedule_file(text, "s.txt");
    ProblemSpec spec = testing::uniform_spec(0, 0, 1, 1, 1, 0.5);
    catalog::apply_schedule_shape(schedule, spec, "s.txt");
    const Problem problem = spec.build();
    validate(problem, schedule);
    return evaluate(problem, schedule).metrics.span;
  };
  EXPECT_DOUBLE_EQ(span_of(lists), 9);  // no header: chunks 2 read as interleaved, as before
  EXPECT_DOUBLE_EQ(span_of("placement: interleaved\n" + lists), 9);
  EXPECT_DOUBLE_EQ(span_of("placement: vshape\n" + lists), 8);
}

// The DualPipeV CSV exported to our text form and read back keeps its V placement (it used to
// deadlock without --placement).
TEST(CatalogScheduleFiles, DualPipeVSurvivesTheTextForm) {
  const std::string path = testing::source_path("tests/data/pytorch/dualpipev_4rank_10mb.csv");
  const Schedule csv = catalog::read_schedule_file(path);
  ASSERT_EQ(csv.placement, Placement::vshape);
  const Schedule text = catalog::parse_schedule_file(to_text(csv), "dualpipev.txt");
  EXPECT_EQ(text.placement, Placement::vshape);
  EXPECT_EQ(text.devices, csv.devices);
  ProblemSpec spec = testing::uniform_spec(0, 0);
  catalog::apply_schedule_shape(text, spec, "dualpipev.txt");
  const Problem problem = spec.build();
  EXPECT_TRUE(check_schedule(problem, text).ok()) << check_schedule(problem, text).message();
  EXPECT_GT(evaluate(problem, text).metrics.span, 0);
}

// Every V generator's schedule reads back from each of the three forms as the same V schedule,
// with no --placement: the file says what it is.
TEST(CatalogScheduleFiles, EveryVScheduleRoundTripsThroughTextJsonAndPytorchCsv) {
  int checked = 0;
  for (const std::string& name : catalog::generators().names()) {
    const GeneratorInfo& info = catalog::generators().get(name);
    if (info.placement != Placement::vshape) continue;
    const Problem problem = testing::generator_spec(info, testing::uniform_spec(4, 8, 3, 3, 2, 0.5)).build();
    const Schedule made = generate(catalog::generators(), name, problem);
    const double span = evaluate(problem, made).metrics.span;
    const std::pair<std::string, std::string> forms[] = {
        {"text", to_text(made)}, {"json", to_json(made).dump()}, {"pytorch-csv", to_pytorch_csv(problem, made)}};
    for (const auto& [form, text] : forms) {
      SCOPED_TRACE(name + " as " + form);
      const Schedule back = catalog::parse_schedule_file(text, name + "." + form);
      EXPECT_EQ(back.placement, Placement::vshape);
      EXPECT_EQ(back.devices, made.devices);
      ProblemSpec spec = testing::uniform_spec(0, 0, 3, 3, 2, 0.5);
      catalog::apply_schedule_shape(back, spec, form);
      const Problem read_problem = spec.build();
      EXPECT_EQ(read_problem.placement, Placement::vshape);
      EXPECT_DOUBLE_EQ(evaluate(read_problem, back).metrics.span, span);
    }
    ++checked;
  }
  EXPECT_GE(checked, 6);  // zb-v-h, dualpipe-v, zb-v, v-min, v-half, v-auto
}

// Problem fields given on top of a scenario (zbsim's flags, the Python module's keywords).
TEST(CatalogScenarioInput, GivenFieldsWinBecomeExplicitAndAutoNeedsAModel) {
  Scenario scenario;
  scenario.source = "s.json";
  scenario.spec = testing::uniform_spec(4, 8);
  const ProblemField* m = find_problem_field("m");
  const ProblemField* tw = find_problem_field("t_w");
  const Scenario applied = catalog::apply_given_fields(scenario, {{m, "12"}, {tw, "2,2,2,3"}});
  EXPECT_EQ(applied.spec.microbatches, 12);
  EXPECT_EQ(applied.spec.t_w, (std::vector<double>{2, 2, 2, 3}));
  EXPECT_EQ(applied.explicit_fields, (std::set<std::string>{"m", "t_w"}));
  EXPECT_EQ(error_of([&] { catalog::apply_given_fields(scenario, {{m, "x"}}); }), "--m: expected a whole number, got 'x'");
  EXPECT_EQ(error_of([&] { catalog::apply_given_fields(scenario, {{find_problem_field("mem_limit"), "auto"}}); }),
            "--mem-limit auto: needs a model-driven scenario (--scenario with a 'model' field)");
}

// Names are checked before any work; a name from the scenario's list is named as its field.
TEST(CatalogComparison, RowsInTheOrderAskedAndUnknownNamesBeforeAnyWork) {
  Scenario scenario;
  scenario.source = "s.json";
  scenario.spec = testing::uniform_spec(4, 8);
  const catalog::Comparison comparison =
      catalog::compare_schedules(scenario, std::vector<std::string>{"zb-h2", "1f1b"});
  ASSERT_EQ(comparison.rows.size(), 2u);
  EXPECT_EQ(comparison.rows[0].schedule, "zb-h2");
  EXPECT_DOUBLE_EQ(comparison.rows[0].metrics.span, 24);
  EXPECT_DOUBLE_EQ(comparison.rows[1].metrics.span, 33);
  EXPECT_DOUBLE_EQ(comparison.traces[1].metrics.span, 33);
  scenario.schedules = {"1f1b", "nope"};
  EXPECT_EQ(error_of([&] { catalog::compare_schedules(scenario, std::nullopt); }).rfind("s.json: field 'schedules': ", 0),
            0u);
  EXPECT_EQ(catalog::compare_schedules(scenario, std::vector<std::string>{"gpipe"}).rows.size(), 1u);
}

// The JSON keys of a row: metrics only when it ran, extras beside them, a reason when set.
TEST(CatalogResultJson, MetricsOnlyForRowsThatRan) {
  catalog::ResultRow unsupported;
  unsupported.schedule = "zb-v";
  unsupported.status = "unsupported";
  unsupported.reason = "why";
  EXPECT_EQ(catalog::to_json(unsupported),
            (nlohmann::json{{"schedule", "zb-v"}, {"status", "unsupported"}, {"chunks", 1}, {"reason", "why"}}));
  Scenario scenario;
  scenario.spec = testing::uniform_spec(4, 8);
  const catalog::SingleRun run = catalog::run_single(scenario, "zb-h1", std::nullopt, catalog::EngineOptions{});
  const nlohmann::json item = catalog::to_json(run.row);
  for (const char* key : {"makespan", "span", "work", "bubble_rate", "peak_memory", "idle"}) {
    EXPECT_TRUE(item.contains(key)) << key;
  }
  EXPECT_EQ(item["span"], 27);
  EXPECT_EQ(nlohmann::json::parse(run.trace.meta.problem_json), to_json(run.spec));
  EXPECT_EQ(catalog::results_json(run.spec, {run.row})["results"][0], item);
}

TEST(CatalogSingleRun, AGivenScheduleTakesItsShapeAndAGeneratorThatCannotRunIsAnError) {
  Scenario scenario;
  scenario.spec = testing::uniform_spec(0, 0);
  const Problem problem = testing::uniform_spec(4, 8).build();
  catalog::GivenSchedule given{generate(catalog::generators(), "zb-h2", problem), "mine.txt"};
  const catalog::SingleRun run = catalog::run_single(scenario, std::nullopt, given, catalog::EngineOptions{});
  EXPECT_EQ(run.spec.devices, 4);
  EXPECT_DOUBLE_EQ(run.row.metrics.span, 24);
  scenario.spec = testing::uniform_spec(4, 8);
  scenario.spec.t_f = {1, 1, 1, 1, 1, 1, 1, 1};  // per stage at two chunks: no single-chunk problem
  scenario.spec.chunks = 2;
  EXPECT_EQ(error_of([&] { catalog::run_single(scenario, "1f1b", std::nullopt, catalog::EngineOptions{}); }),
            "1f1b: needs chunks=1, but the costs are given per stage for chunks=2");
}

TEST(CatalogFrontier, OptionsAndPlacementsAreCheckedBeforeAnySolve) {
  const ProblemSpec spec = testing::uniform_spec(4, 8);
  FrontierOptions options;
  options.to_times_p = 2;
  const auto curves = catalog::frontier_curves(spec, "s", std::nullopt, options);
  ASSERT_EQ(curves.size(), 2u);
  EXPECT_EQ(curves[0].placement, Placement::linear);
  EXPECT_EQ(curves[1].chunks, 2);
  const nlohmann::json json = catalog::frontier_json(spec, curves);
  EXPECT_EQ(json["curves"][1]["placement"], "vshape");
  EXPECT_EQ(json["curves"][0]["frontier"].size(), 9u);
  EXPECT_EQ(error_of([&] { catalog::frontier_curves(spec, "s", std::vector<std::string>{}, options); }),
            "--placements: name at least one of linear, interleaved, vshape");
  options.from_times_p = 0;
  EXPECT_EQ(error_of([&] { catalog::frontier_curves(spec, "s", std::nullopt, options); }),
            "--from 0 --to 2 --step 0.125: need from > 0, step > 0 and to >= from");
}

TEST(CatalogSolveRow, TheSolversNumbersAreExtrasAndAnInfeasibleLimitNamesItsSource) {
  ProblemSpec spec = testing::uniform_spec(3, 4);
  spec.mem_f = {2};
  spec.mem_b = {-1};
  spec.mem_w = {-1};
  spec.mem_limit = MemoryLimit::parse("6", "t");
  IlpOptions options;
  options.time_limit_s = 20;
  const catalog::SolveRun run = catalog::solve_row(spec.build(), options, "--mem-limit");
  EXPECT_EQ(run.row.schedule, "zb-ilp");
  EXPECT_EQ(run.row.status, ilp_status_name(run.result.status));
  EXPECT_DOUBLE_EQ(run.row.metrics.span, run.result.span);
  ASSERT_EQ(run.row.extras.size(), 9u);
  EXPECT_EQ(run.row.extras[0].first, "best_bound");
  spec.mem_limit = MemoryLimit::parse("0.5", "t");
  EXPECT_EQ(error_of([&] { catalog::solve_row(spec.build(), options, "s.json"); }).rfind("s.json: ", 0), 0u);
  options.threads = 0;
  EXPECT_EQ(error_of([&] { catalog::solve_row(spec.build(), options, "s.json"); }), "--threads: 0 (need at least 1)");
}

}  // namespace
}  // namespace zb
