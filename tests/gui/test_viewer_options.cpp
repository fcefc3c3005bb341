// zbview's command line.
#include <gtest/gtest.h>

#include <functional>

#include "sim/support/error.h"
#include "gui/viewer_core/viewer_options.h"
#include "sim/core/problem_fields.h"

namespace zb::view {
namespace {

TEST(ViewerOptions, ParsesFilesProblemFlagsAndHeadlessOutput) {
  const ViewerOptions options = parse_viewer_args({"a.json", "--file", "t1.json", "--p", "8", "--m",
                                                   "32", "--tw", "0.5", "--mem-limit", "2p", "--schedules",
                                                   "1f1b, zb-h1", "--screenshot", "out.png", "--size", "800x600",
                                                   "--arrows", "--no-memory", "b.txt"});
  EXPECT_EQ(options.files, (std::vector<std::string>{"a.json", "t1.json", "b.txt"}));
  EXPECT_EQ(*options.screenshot, "out.png");
  EXPECT_EQ(options.width_px, 800);
  EXPECT_EQ(options.height_px, 600);
  EXPECT_TRUE(options.show_arrows);
  EXPECT_FALSE(options.show_memory);
  EXPECT_EQ(split_names(*options.schedules), (std::vector<std::string>{"1f1b", "zb-h1"}));
  EXPECT_TRUE(split_names("none").empty());

  const ProblemSpec spec = apply_problem_flags(default_problem_spec(), options);
  EXPECT_EQ(spec.devices, 8);
  EXPECT_EQ(spec.microbatches, 32);
  EXPECT_EQ(spec.t_w, std::vector<double>{0.5});
  EXPECT_EQ(spec.t_f, std::vector<double>{1});
  ASSERT_TRUE(spec.mem_limit);
  EXPECT_TRUE(spec.mem_limit->times_p);
  EXPECT_DOUBLE_EQ(spec.mem_limit->value, 2);
}

TEST(ViewerOptions, BadFlagsAreInputErrorsNamingThem) {
  EXPECT_THROW(parse_viewer_args({"--size", "huge"}), InputError);
  EXPECT_THROW(parse_viewer_args({"--p", "0"}), InputError);
  EXPECT_THROW(parse_viewer_args({"--no-such-flag"}), InputError);
  try {
    (void)apply_problem_flags(default_problem_spec(), parse_viewer_args({"--tf", "1,x"}));
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--tf"), std::string::npos) << e.what();
  }
}

// zbview's problem flags are zbsim's: one table makes both (it used to lack --tbw, --mem-f,
// --mem-b, --mem-w, --bytes-act and --time-unit).
TEST(ViewerOptions, TheProblemFlagsAreZbsimsFromOneTable) {
  const std::string usage = viewer_usage();
  for (const ProblemField& field : problem_fields()) {
    EXPECT_NE(usage.find("--" + std::string(field.flag) + " "), std::string::npos) << field.flag;
  }
  const ProblemSpec spec = apply_problem_flags(
      default_problem_spec(), parse_viewer_args({"--tbw", "3", "--mem-f", "2", "--mem-b", "-1", "--mem-w", "-1",
                                                 "--bytes-act", "1e6", "--time-unit", "us"}));
  EXPECT_EQ(spec.t_bw, std::vector<double>{3});
  EXPECT_EQ(spec.mem_f, std::vector<double>{2});
  EXPECT_EQ(spec.mem_b, std::vector<double>{-1});
  EXPECT_DOUBLE_EQ(spec.bytes_act, 1e6);
  EXPECT_EQ(spec.time_unit, TimeUnit::us);
  EXPECT_THROW(parse_viewer_args({"--time-unit", "min"}), InputError);
}

TEST(ViewerOptions, UsageListsTheHeadlessFlags) {
  const std::string usage = viewer_usage();
  EXPECT_NE(usage.find("--screenshot"), std::string::npos);
  EXPECT_NE(usage.find("--schedules"), std::string::npos);
}

}  // namespace
}  // namespace zb::view

namespace zb::view {
namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// --engine and --cluster mean what they mean to zbsim simulate.
TEST(ViewerOptions, EngineAndClusterAreZbsimsFlags) {
  const std::vector<std::string> labels{"evaluator", "SimGrid (ideal network)", "SimGrid: 1x8-nvlink"};
  EXPECT_EQ(find_engine(labels, "eval"), 0);
  EXPECT_EQ(find_engine(labels, "simgrid"), 1);
  EXPECT_EQ(find_engine(labels, "simgrid", "ideal"), 1);
  EXPECT_EQ(find_engine(labels, "simgrid", "1x8-nvlink"), 2);
  EXPECT_NE(error_of([&] { find_engine(labels, "1x8-nvlink"); }).find("--engine simgrid --cluster 1x8-nvlink"),
            std::string::npos);
  const std::string unknown = error_of([&] { find_engine(labels, "simgrid", "tpu"); });
  EXPECT_NE(unknown.find("--cluster 'tpu'"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("1x8-nvlink"), std::string::npos) << unknown;
  EXPECT_NE(error_of([&] { find_engine(labels, "eval", "1x8-nvlink"); }).find("--engine simgrid only"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_viewer_args({"--cluster", "1x8-nvlink"}); }).find("--engine simgrid only"),
            std::string::npos);
  EXPECT_EQ(*parse_viewer_args({"--engine", "simgrid", "--cluster", "1x8-nvlink"}).cluster, "1x8-nvlink");
  EXPECT_THROW(find_engine({"evaluator"}, "simgrid"), InputError);
  // A trace is a file to open, not an output as zbsim's and zbexec's --trace: no such flag here.
  EXPECT_NE(error_of([] { parse_viewer_args({"--trace", "t.json"}); }).find("zbview t.json"), std::string::npos);
}

}  // namespace
}  // namespace zb::view
