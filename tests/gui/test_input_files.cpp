// Recognising and reading the files zbview opens; bad files are InputErrors naming the file.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/gui/gui_test_support.h"
#include "sim/support/error.h"
#include "sim/formats/trace_json.h"
#include "gui/viewer_core/input_files.h"
#include "gui/viewer_core/model_presets.h"

namespace zb::view {
namespace {

using testing::evaluated;
using testing::uniform_spec;

template <typename Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(InputFiles, RecognisesATraceAndReadsItBack) {
  ProblemSpec spec = uniform_spec(4, 8);
  spec.mem_limit = MemoryLimit{2, true};
  Trace trace = evaluated("zb-h1", spec);
  trace.meta.problem_json = to_json(spec).dump();
  const LoadedInput input = parse_input_text(to_json(trace).dump(), "runs/zb-h1.json");
  ASSERT_EQ(input.kind, InputKind::trace);
  ASSERT_TRUE(input.trace);
  EXPECT_EQ(input.trace->spans.size(), trace.spans.size());
  EXPECT_DOUBLE_EQ(input.trace->metrics.span, 27);
  ASSERT_TRUE(input.trace_memory_limit);
  EXPECT_DOUBLE_EQ(*input.trace_memory_limit, 8);  // 2p with M_B = 1
  EXPECT_EQ(trace_label(*input.trace, input.source), "zb-h1 (eval, zb-h1.json)");
}

TEST(InputFiles, RecognisesAScenario) {
  const auto input = parse_input_text(R"({"name": "paper", "problem": {"p": 4, "m": 12, "t_f": 1, "t_b": 1, "t_w": 0.5},
                                          "schedules": ["1f1b", "zb-h1"]})",
                                      "scenarios/paper.json");
  ASSERT_EQ(input.kind, InputKind::scenario);
  EXPECT_EQ(input.scenario->name, "paper");
  EXPECT_EQ(input.scenario->spec.devices, 4);
  EXPECT_EQ(input.scenario->spec.microbatches, 12);
  EXPECT_EQ(input.scenario->schedules, (std::vector<std::string>{"1f1b", "zb-h1"}));
}

TEST(InputFiles, RecognisesScheduleTextAndScheduleJson) {
  const auto text = parse_input_text("# two devices\nd0: F0 F1 B0 W0 B1 W1\nd1: F0 B0 W0 F1 B1 W1\n", "dir/mine.txt");
  ASSERT_EQ(text.kind, InputKind::schedule);
  EXPECT_EQ(text.schedule->device_count(), 2);
  EXPECT_FALSE(text.schedule->name.empty());
  const auto json = parse_input_text(R"({"schedule": "x", "devices": [["F0", "BW0"], ["F0", "BW0"]]})", "x.json");
  ASSERT_EQ(json.kind, InputKind::schedule);
  EXPECT_EQ(json.schedule->device_count(), 2);
}

TEST(InputFiles, MalformedFilesNameTheFileAndTheProblem) {
  EXPECT_NE(error_of([] { parse_input_text("{\"spans\": [", "broken.json"); }).find("broken.json: malformed JSON"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_input_text("   \n", "empty.json"); }).find("empty.json: the file is empty"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_input_text(R"({"hello": 1})", "other.json"); }).find("other.json: not a trace"),
            std::string::npos);
  // A trace whose span lacks a field.
  const std::string missing =
      error_of([] { parse_input_text(R"({"devices": 1, "spans": [{"device": 0}], "memory": []})", "t.json"); });
  EXPECT_NE(missing.find("t.json"), std::string::npos) << missing;
  const std::string scenario = error_of([] { parse_input_text(R"({"problem": {"p": 0, "m": 4, "t_f": 1, "t_b": 1, "t_w": 1}})", "s.json"); });
  EXPECT_NE(scenario.find("s.json"), std::string::npos) << scenario;
  const std::string schedules = error_of([] { parse_input_text(R"({"problem": {"p": 2, "m": 4, "t_f": 1, "t_b": 1, "t_w": 1}, "schedules": [3]})", "s.json"); });
  EXPECT_NE(schedules.find("schedules"), std::string::npos) << schedules;
  // The viewer reads scenarios with zbsim's reader: an unknown field is an error in both.
  const std::string unknown = error_of([] {
    parse_input_text(R"({"problem": {"p": 2, "m": 4, "t_f": 1, "t_b": 1, "t_w": 1}, "schedule": ["zb-h1"]})", "s.json");
  });
  EXPECT_NE(unknown.find("s.json: unknown field 'schedule'"), std::string::npos) << unknown;
  const std::string text = error_of([] { parse_input_text("d0: F0 X9\n", "bad.txt"); });
  EXPECT_NE(text.find("bad.txt"), std::string::npos) << text;
  EXPECT_NE(error_of([] { load_input_file("/nonexistent/zbview.json"); }).find("/nonexistent/zbview.json"), std::string::npos);
}

TEST(InputFiles, FileNameOfAPath) {
  EXPECT_EQ(file_name_of("a/b/c.json"), "c.json");
  EXPECT_EQ(file_name_of("c.json"), "c.json");
}

}  // namespace
}  // namespace zb::view

#include <filesystem>

namespace zb::view {
namespace {

// Every scenario shipped in scenarios/ (not the sweep grids) opens in the viewer as a scenario whose problem builds.
TEST(InputFiles, EveryShippedScenarioOpens) {
  int opened = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(testing::source_path("scenarios"))) {
    if (entry.path().extension() != ".json") continue;
    if (entry.path().parent_path().filename() == "sweeps") continue;  // sweep grids, not scenarios
    const LoadedInput input = load_input_file(entry.path().string());
    ASSERT_EQ(input.kind, InputKind::scenario) << entry.path();
    EXPECT_NO_THROW((void)input.scenario->spec.build()) << entry.path();
    ++opened;
  }
  EXPECT_GE(opened, 1);
}

// The real torch.profiler run of tests/data/kineto: each rank's file is a trace of that rank; the
// files opened together are one trace of the run, where the first of them was.
TEST(InputFiles, TorchProfilerFilesOfOneRunBecomeOneTrace) {
  const std::string dir = testing::source_path("tests/data/kineto/");
  const LoadedInput one = load_input_file(dir + "zb-h1_4rank_4mb.rank1.json");
  ASSERT_EQ(one.kind, InputKind::trace);
  ASSERT_TRUE(one.profiled_rank);
  EXPECT_EQ(one.profiled_rank->rank, 1);
  EXPECT_EQ(one.trace->meta.engine, "torch.profiler");

  const std::vector<LoadedInput> inputs =
      load_input_files({dir + "zb-h1_4rank_4mb.rank2.json", dir + "zb-h1_4rank_4mb.csv", dir + "zb-h1_4rank_4mb.rank0.json",
                        dir + "zb-h1_4rank_4mb.rank3.json", dir + "zb-h1_4rank_4mb.rank1.json"});
  ASSERT_EQ(inputs.size(), 2u);
  ASSERT_EQ(inputs[0].kind, InputKind::trace);
  EXPECT_EQ(inputs[0].trace->devices, 4);
  EXPECT_EQ(inputs[0].trace->spans.size(), 4u * 12 + 24 + 24);  // compute, sends, receives
  EXPECT_EQ(trace_label(*inputs[0].trace, inputs[0].source), "trace (torch.profiler, zb-h1_4rank_4mb.rank2.json + 3 more)");
  EXPECT_EQ(inputs[1].kind, InputKind::schedule);  // the PyTorch CSV the run executed

  const std::string twice = error_of([&] {
    (void)load_input_files({dir + "zb-h1_4rank_4mb.rank0.json", dir + "zb-h1_4rank_4mb.rank0.json"});
  });
  EXPECT_NE(twice.find("both are rank 0"), std::string::npos) << twice;
  EXPECT_NE(error_of([] { parse_input_text(R"([{"name": "aten::mm", "ph": "X", "ts": 0, "dur": 1}])", "cpu.json"); })
                .find("cpu.json: no \"PP:\" annotations"),
            std::string::npos);
}

}  // namespace
}  // namespace zb::view

namespace zb::view {
namespace {

// PyTorch's CSVs open by content, compute-only and compute_comms (PyTorch's default dump): the
// transfers and FSDP actions are checked and counted, and the note says so.
TEST(InputFiles, PyTorchCsvsOpenAndSayWhatTheyHeldBesideCompute) {
  const LoadedInput comms = load_input_file(testing::source_path("tests/data/pytorch/1f1bi_4rank_8mb_comms.csv"));
  ASSERT_EQ(comms.kind, InputKind::schedule);
  EXPECT_EQ(comms.schedule->device_count(), 4);
  EXPECT_EQ(comms.schedule->chunk_count(), 2);
  EXPECT_EQ(comms.schedule->microbatch_count(), 8);
  EXPECT_FALSE(comms.note.empty());
  const LoadedInput compute = load_input_file(testing::source_path("tests/data/kineto/zb-h1_4rank_4mb.csv"));
  ASSERT_EQ(compute.kind, InputKind::schedule);
  EXPECT_EQ(compute.schedule->device_count(), 4);
  EXPECT_TRUE(compute.note.empty());
}

// A Chrome trace that is not torch.profiler's (ours, written for Perfetto) is refused with the way
// to the file zbview reads.
TEST(InputFiles, AChromeTraceForPerfettoSaysWhichFileToOpenInstead) {
  const std::string message = error_of([] {
    parse_input_text(R"({"traceEvents": [{"ph": "X", "name": "F0", "pid": 0, "tid": 0, "ts": 0, "dur": 1}]})",
                     "run.chrome.json");
  });
  EXPECT_NE(message.find("run.chrome.json: a Chrome trace, but not torch.profiler's"), std::string::npos) << message;
  EXPECT_NE(message.find("--trace FILE"), std::string::npos) << message;
}

}  // namespace
}  // namespace zb::view
