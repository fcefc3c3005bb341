// The catalog: one generator list, one engine dispatcher, one schedule-file reader.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/catalog/engines.h"
#include "sim/catalog/generators.h"
#include "sim/catalog/schedule_files.h"
#include "sim/schedule/atomic_file.h"
#include "sim/schedule/error.h"
#include "sim/schedule/evaluator.h"
#include "sim/schedule/memory.h"
#include "sim/schedule/pytorch_csv.h"
#include "sim/schedule/validator.h"
#include "sim/solver/ilp_solver.h"
#include "tests/support/input_error.h"
#include "tests/support/problems.h"

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

}  // namespace
}  // namespace zb
