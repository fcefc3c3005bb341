// zbview's command line.
#include <gtest/gtest.h>

#include "sim/schedule/error.h"
#include "gui/timeline/viewer_options.h"
#include "sim/schedule/problem_fields.h"

namespace zb::view {
namespace {

TEST(ViewerOptions, ParsesFilesProblemFlagsAndHeadlessOutput) {
  const ViewerOptions options = parse_viewer_args({"a.json", "--trace", "t1.json", "--trace", "t2.json", "--p", "8", "--m",
                                                   "32", "--tw", "0.5", "--mem-limit", "2p", "--schedules",
                                                   "1f1b, zb-h1", "--screenshot", "out.png", "--size", "800x600",
                                                   "--arrows", "--no-memory", "b.txt"});
  EXPECT_EQ(options.files, (std::vector<std::string>{"a.json", "b.txt"}));
  EXPECT_EQ(options.traces, (std::vector<std::string>{"t1.json", "t2.json"}));
  EXPECT_EQ(*options.screenshot, "out.png");
  EXPECT_EQ(options.width_px, 800);
  EXPECT_EQ(options.height_px, 600);
  EXPECT_TRUE(options.show_arrows);
  EXPECT_FALSE(options.show_memory);
  EXPECT_EQ(split_names(*options.schedules), (std::vector<std::string>{"1f1b", "zb-h1"}));

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

TEST(ViewerOptions, EnginesAreFoundByShortName) {
  const std::vector<std::string> labels{"evaluator", "SimGrid (ideal network)", "SimGrid: 1x8-nvlink"};
  EXPECT_EQ(find_engine(labels, "eval"), 0);
  EXPECT_EQ(find_engine(labels, "simgrid"), 1);
  EXPECT_EQ(find_engine(labels, "1x8-nvlink"), 2);
  try {
    find_engine(labels, "tpu");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tpu"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("1x8-nvlink"), std::string::npos) << e.what();
  }
  EXPECT_THROW(find_engine({"evaluator"}, "simgrid"), InputError);
}

}  // namespace
}  // namespace zb::view
