// torch.profiler traces of a pipeline run: the real files of tests/data/kineto (made by
// make_trace.py with Debian's torch 1.13, whose profiler writes the legacy format) and the
// rules of the reader on small hand-written events (Kineto's object form, overlapped blocks, bad
// input).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "sim/support/atomic_file.h"
#include "sim/support/error.h"
#include "sim/formats/pytorch_csv.h"
#include "sim/formats/torch_profiler_trace.h"
#include "tests/testing/input_error.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

using testing::error_of;

std::string data(const std::string& name) { return testing::source_path("tests/data/kineto/" + name); }

std::vector<std::string> rank_files(const std::string& stem, int ranks) {
  std::vector<std::string> files;
  for (int r = ranks - 1; r >= 0; --r) files.push_back(data(stem + ".rank" + std::to_string(r) + ".json"));  // any order
  return files;
}

std::vector<Span> compute_spans_of(const Trace& trace, int device) {
  std::vector<Span> spans;
  for (const Span& span : trace.spans) {
    if (span.device == device && span.stream == Stream::compute) spans.push_back(span);
  }
  return spans;
}

int count(const Trace& trace, int device, Stream stream) {
  return static_cast<int>(std::count_if(trace.spans.begin(), trace.spans.end(), [&](const Span& s) {
    return s.device == device && s.stream == stream;
  }));
}

// The measured order of every device is the schedule the run was given (the CSV beside it).
void expect_schedule_order(const Trace& trace, const std::string& csv) {
  const ImportedSchedule imported = parse_pytorch_csv(read_file(data(csv)), csv);
  ASSERT_EQ(trace.devices, imported.devices);
  for (int d = 0; d < trace.devices; ++d) {
    const std::vector<Span> spans = compute_spans_of(trace, d);
    const auto& actions = imported.schedule.devices[static_cast<std::size_t>(d)];
    ASSERT_EQ(spans.size(), actions.size()) << "device " << d;
    for (std::size_t i = 0; i < spans.size(); ++i) {
      EXPECT_EQ(spans[i].pass, actions[i].pass) << "device " << d << " action " << i;
      EXPECT_EQ(spans[i].microbatch, actions[i].microbatch) << "device " << d << " action " << i;
      EXPECT_EQ(spans[i].chunk, actions[i].chunk);
      EXPECT_EQ(spans[i].stage, d);  // one stage per rank
      // One thread runs a rank's actions: they follow each other, each after the previous ended.
      EXPECT_GT(spans[i].end, spans[i].start);
      if (i > 0) {
        EXPECT_GE(spans[i].start, spans[i - 1].end);
      }
    }
  }
}

TEST(TorchProfilerTrace, ReadsTheRealZbH1RunOfFourRanks) {
  const Trace trace = read_torch_profiler_files(rank_files("zb-h1_4rank_4mb", 4));
  EXPECT_EQ(trace.meta.engine, "torch.profiler");
  EXPECT_EQ(trace.meta.time_unit, TimeUnit::ms);
  ASSERT_EQ(trace.devices, 4);
  expect_schedule_order(trace, "zb-h1_4rank_4mb.csv");
  for (int d = 0; d < 4; ++d) {
    EXPECT_EQ(compute_spans_of(trace, d).size(), 12u);  // F, I and W of 4 microbatches
    // Activations leave every stage but the last, gradients every stage but the first.
    EXPECT_EQ(count(trace, d, Stream::send), (d < 3 ? 4 : 0) + (d > 0 ? 4 : 0)) << d;
    EXPECT_EQ(count(trace, d, Stream::recv), (d > 0 ? 4 : 0) + (d < 3 ? 4 : 0)) << d;
  }
  // Transfers name the producing stage: device 1 receives stage 0's activations and stage 2's
  // input gradients (our B: the run split I and W).
  for (const Span& span : trace.spans) {
    if (span.device != 1 || span.stream != Stream::recv) continue;
    EXPECT_EQ(span.stage, span.pass == Pass::F ? 0 : 2);
    EXPECT_TRUE(span.pass == Pass::F || span.pass == Pass::B);
  }
  // Times are ms from the earliest span; work is the busiest device's compute time.
  double earliest = 1e300;
  for (const Span& span : trace.spans) earliest = std::min(earliest, span.start);
  EXPECT_EQ(earliest, 0.0);
  EXPECT_EQ(trace.metrics.work, *std::max_element(trace.metrics.busy.begin(), trace.metrics.busy.end()));
  EXPECT_GT(trace.metrics.span, trace.metrics.work);
  EXPECT_GT(trace.metrics.bubble_rate, 0.0);
  EXPECT_LT(trace.metrics.bubble_rate, 1.0);
}

TEST(TorchProfilerTrace, ReadsTheRealOneFOneBRunWithFullBackwards) {
  const Trace trace = read_torch_profiler_files(rank_files("1f1b_2rank_4mb", 2));
  ASSERT_EQ(trace.devices, 2);
  expect_schedule_order(trace, "1f1b_2rank_4mb.csv");
  // PyTorch's B without a W is the full backward, our BW.
  for (const Span& span : compute_spans_of(trace, 0)) EXPECT_TRUE(span.pass == Pass::F || span.pass == Pass::BW);
}

TEST(TorchProfilerTrace, OneLegacyFileIsTheRankOfItsSmallestStage) {
  const std::string path = data("zb-h1_4rank_4mb.rank2.json");
  const ProfiledRank rank = read_profiled_rank(nlohmann::json::parse(read_file(path)), path);
  EXPECT_EQ(rank.rank, 2);
  EXPECT_FALSE(rank.shared_clock);
  EXPECT_EQ(rank.world_size, 0);
  const Trace alone = profiled_trace({&rank, 1});
  EXPECT_EQ(alone.devices, 3);  // ranks 0 and 1 are not given: empty rows
  EXPECT_EQ(compute_spans_of(alone, 2).size(), 12u);
  EXPECT_TRUE(compute_spans_of(alone, 0).empty());
}

nlohmann::json event(const std::string& name, double ts, double dur) {
  return {{"name", name}, {"ph", "X"}, {"ts", ts}, {"dur", dur}, {"pid", 1}, {"tid", 1}, {"cat", "user_annotation"}};
}

nlohmann::json kineto(int rank, int world, std::vector<nlohmann::json> events) {
  events.push_back({{"name", "aten::mm"}, {"ph", "X"}, {"ts", 0}, {"dur", 5}});  // not an action: ignored
  return {{"schemaVersion", 1}, {"distributedInfo", {{"backend", "nccl"}, {"rank", rank}, {"world_size", world}}},
          {"traceEvents", events}};
}

TEST(TorchProfilerTrace, KinetoFilesShareOneClockAndNameTheirRank) {
  const ProfiledRank r1 = read_profiled_rank(
      kineto(1, 2, {event("PP:1F0", 1500, 1000), event("PP:1I0", 2500, 1000), event("PP:1W0", 3500, 500)}), "r1.json");
  const ProfiledRank r0 = read_profiled_rank(
      kineto(0, 2, {event("PP:0F0", 1000, 400), event("PP:0SEND_F0", 1400, 10), event("PP:0B0", 3600, 800)}), "r0.json");
  EXPECT_TRUE(r0.shared_clock);
  const std::vector<ProfiledRank> ranks{r1, r0};
  const Trace trace = profiled_trace(ranks);
  ASSERT_EQ(trace.devices, 2);
  const std::vector<Span> d1 = compute_spans_of(trace, 1);
  ASSERT_EQ(d1.size(), 3u);
  EXPECT_DOUBLE_EQ(d1[0].start, 0.5);  // ms after rank 0's first action
  EXPECT_EQ(d1[1].pass, Pass::B);
  EXPECT_EQ(compute_spans_of(trace, 0)[1].pass, Pass::BW);  // no 0W0: a full backward
  EXPECT_EQ(count(trace, 0, Stream::send), 1);
  EXPECT_DOUBLE_EQ(trace.metrics.work, 2.5);
}

TEST(TorchProfilerTrace, BaseTimeAndDeviceAnnotations) {
  nlohmann::json file = kineto(0, 1, {event("PP:0F0", 10, 100), event("PP:0B0", 200, 100)});
  file["baseTimeNanoseconds"] = 1700000000000000000;
  nlohmann::json gpu = event("PP:0F0", 40, 60);
  gpu["cat"] = "gpu_user_annotation";
  file["traceEvents"].push_back(gpu);
  const ProfiledRank rank = read_profiled_rank(file, "gpu.json");
  // The device-side annotation times the GPU's work; the host-side ones are left out.
  ASSERT_EQ(rank.actions.size(), 1u);
  EXPECT_EQ(rank.actions[0].start_ns, 1700000000000000000 + 40000);
  EXPECT_EQ(rank.actions[0].end_ns - rank.actions[0].start_ns, 60000);
}

TEST(TorchProfilerTrace, AnOverlappedBlockIsTwoHalves) {
  const ProfiledRank rank = read_profiled_rank(
      nlohmann::json::array({event("PP:(0F1;7I0)OVERLAP_F_B", 100, 50), event("PP:0UNSHARD", 0, 5)}), "dualpipe.json");
  ASSERT_EQ(rank.actions.size(), 2u);
  EXPECT_EQ(rank.fsdp_actions, 1);
  EXPECT_TRUE(rank.actions[0].overlap_next);
  EXPECT_EQ(rank.actions[0].end_ns, rank.actions[1].start_ns);
  EXPECT_EQ(rank.actions[1].stage, 7);
  EXPECT_EQ(rank.actions[1].op, 'I');
  const Trace trace = profiled_trace({&rank, 1});
  EXPECT_EQ(compute_spans_of(trace, 0)[1].chunk, 1);  // stage 7 is rank 0's second stage
}

std::string read_error(const nlohmann::json& document) {
  return error_of([&] { (void)read_profiled_rank(document, "run.json"); });
}

TEST(TorchProfilerTrace, BadFilesNameTheFileEventAndValue) {
  EXPECT_NE(read_error(nlohmann::json::array({event("aten::mm", 0, 1)})).find("run.json: no \"PP:\" annotations"),
            std::string::npos);
  EXPECT_NE(read_error({{"hello", 1}}).find("run.json: not a torch.profiler trace"), std::string::npos);
  const std::string op = read_error(nlohmann::json::array({event("PP:0X3", 0, 1)}));
  EXPECT_NE(op.find("run.json: event 0 ('PP:0X3'): cell '0X3' has op 'X'"), std::string::npos) << op;
  EXPECT_NE(read_error(nlohmann::json::array({event("PP:F3", 0, 1)})).find("bad cell 'F3'"),
            std::string::npos);
  EXPECT_NE(read_error(nlohmann::json::array({event("PP:0F", 0, 1)})).find("F needs a microbatch"),
            std::string::npos);
  EXPECT_NE(read_error(nlohmann::json::array({event("PP:0F0", 0, -1)})).find("field 'dur' is -1"), std::string::npos);
  nlohmann::json text_time = event("PP:0F0", 0, 1);
  text_time["ts"] = "soon";
  EXPECT_NE(read_error(nlohmann::json::array({text_time})).find("field 'ts' is \"soon\": expected a number"),
            std::string::npos);
  nlohmann::json instant = event("PP:0F0", 0, 1);
  instant["ph"] = "i";
  EXPECT_NE(read_error(nlohmann::json::array({instant})).find("not a complete event"), std::string::npos);
  EXPECT_NE(read_error(nlohmann::json::array({event("PP:(0F1;1I0;2W0)OVERLAP_F_B", 0, 1)})).find("zbsim overlaps pairs"),
            std::string::npos);
  EXPECT_NE(read_error(nlohmann::json::array({event("PP:0UNSHARD7", 0, 1)})).find("UNSHARD takes no microbatch"), std::string::npos);
  EXPECT_NE(read_error(nlohmann::json::array({event("PP:2147483647F0", 0, 1)})).find("over the limit"),
            std::string::npos);
  nlohmann::json rank = kineto(3, 2, {event("PP:0F0", 0, 1)});
  EXPECT_NE(read_error(rank).find("rank 3 is outside world size 2"), std::string::npos);
}

TEST(TorchProfilerTrace, FilesThatAreNotOneRunAreRefused) {
  auto merge_error = [](std::vector<ProfiledRank> ranks) { return error_of([&] { (void)profiled_trace(ranks); }); };
  const ProfiledRank twice = read_profiled_rank(
      nlohmann::json::array({event("PP:0F0", 0, 1), event("PP:0F0", 5, 1)}), "two-steps.json");
  EXPECT_NE(merge_error({twice}).find("two-steps.json: PP:0F0 appears twice"), std::string::npos);
  const ProfiledRank a = read_profiled_rank(kineto(0, 2, {event("PP:0F0", 0, 1)}), "a.json");
  const ProfiledRank b = read_profiled_rank(kineto(0, 2, {event("PP:1F0", 0, 1)}), "b.json");
  EXPECT_NE(merge_error({a, b}).find("a.json and b.json: both are rank 0"), std::string::npos);
  const ProfiledRank c = read_profiled_rank(kineto(1, 2, {event("PP:0F1", 0, 1)}), "c.json");
  EXPECT_NE(merge_error({a, c}).find("a.json and c.json: both run stage 0"), std::string::npos);
  const ProfiledRank wide = read_profiled_rank(kineto(1, 4, {event("PP:1F0", 0, 1)}), "wide.json");
  EXPECT_NE(merge_error({a, wide}).find("world sizes 2 and 4 differ"), std::string::npos);
  const ProfiledRank legacy = read_profiled_rank(nlohmann::json::array({event("PP:1F0", 0, 1)}), "legacy.json");
  EXPECT_NE(merge_error({a, legacy}).find("Kineto's format, the other the legacy profiler's"), std::string::npos);
  EXPECT_EQ(merge_error({}), "no torch.profiler trace given");
  const ProfiledRank first = read_profiled_rank(
      nlohmann::json::array({event("PP:0RECV_F0", 0, 1), event("PP:0F0", 1, 1)}), "first.json");
  EXPECT_NE(merge_error({first}).find("first.json: PP:0RECV_F0: stage 0 receives no activation"), std::string::npos);
}

}  // namespace
}  // namespace zb
