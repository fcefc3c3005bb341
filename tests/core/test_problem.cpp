// Problem building: broadcasting, chunk splitting, placements, memory limits and validation.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/support/error.h"
#include "sim/core/problem_spec.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

TEST(Problem, ScalarsAreBroadcastAndSplitOverChunks) {
  ProblemSpec spec = testing::uniform_spec(4, 8, 2.0, 4.0, 1.0, 0.5, 2);
  const Problem problem = spec.build();
  ASSERT_EQ(problem.stages(), 8);
  EXPECT_EQ(problem.placement, Placement::interleaved);
  EXPECT_DOUBLE_EQ(problem.t_f[5], 1.0);
  EXPECT_DOUBLE_EQ(problem.t_bw[5], 2.5);
  EXPECT_DOUBLE_EQ(problem.t_comm[5], 0.5);  // per boundary, not split
  EXPECT_DOUBLE_EQ(problem.mem_f[0], 0.5);
  // Changing v never changes the total work of a device.
  EXPECT_DOUBLE_EQ(problem.device_work(0), 8 * (2.0 + 4.0 + 1.0));
  EXPECT_DOUBLE_EQ(spec.with_chunks(1).build().device_work(0), problem.device_work(0));
}

TEST(Problem, PerDeviceArraysFollowThePlacement) {
  ProblemSpec spec;
  spec.devices = 2;
  spec.microbatches = 4;
  spec.chunks = 2;
  spec.placement = Placement::vshape;
  spec.t_f = {2.0, 4.0};
  spec.t_b = {1.0};
  spec.t_w = {1.0};
  const Problem problem = spec.build();
  // V: device 0 holds stages 0 and 3, device 1 stages 1 and 2.
  EXPECT_EQ(problem.stage_of(0, 1), 3);
  EXPECT_EQ(problem.device_of_stage(2), 1);
  EXPECT_DOUBLE_EQ(problem.t_f[3], 1.0);
  EXPECT_DOUBLE_EQ(problem.t_f[2], 2.0);
  // Stages 1 and 2 share device 1: no transfer across that boundary.
  EXPECT_DOUBLE_EQ(problem.comm_after(1), 0.0);
}

TEST(Problem, MemoryLimitInUnitsOfP) {
  ProblemSpec spec;
  spec.devices = 4;
  spec.microbatches = 8;
  spec.t_f = spec.t_b = spec.t_w = {1.0};
  spec.mem_f = {2};
  spec.mem_b = {-1};
  spec.mem_w = {-1};
  spec.mem_limit = MemoryLimit::parse("2p", "test");
  EXPECT_DOUBLE_EQ(*spec.build().memory_limit(), 16.0);
  spec.mem_limit = MemoryLimit::parse("10", "test");
  EXPECT_DOUBLE_EQ(*spec.build().memory_limit(), 10.0);
  EXPECT_THROW(MemoryLimit::parse("-1p", "test"), InputError);
  EXPECT_THROW(MemoryLimit::parse("p", "test"), InputError);
  EXPECT_THROW(MemoryLimit::parse("abc", "test"), InputError);
}

// The official runtime's M_B (max(f_mem[:2]), zerobubble/runtime.py): 1p is 1F1B's memory, p
// times what devices 0 and 1 keep per microbatch; a last stage whose output layer keeps more (the
// logits) holds one microbatch in 1F1B and must not raise every device's limit.
TEST(Problem, OnePIsWhatTheFirstTwoDevicesKeepNotTheLargestStage) {
  ProblemSpec spec;
  spec.devices = 4;
  spec.microbatches = 8;
  spec.t_f = spec.t_b = spec.t_w = {1.0};
  spec.mem_f = {2, 3, 2, 7};
  spec.mem_b = {-1, -1, -1, -1};
  spec.mem_w = {-1, -2, -1, -6};
  spec.mem_limit = MemoryLimit::parse("1p", "test");
  const Problem problem = spec.build();
  EXPECT_DOUBLE_EQ(problem.activation_unit(), 3.0);
  EXPECT_DOUBLE_EQ(*problem.memory_limit(), 12.0);
  spec.devices = 1;
  spec.mem_f = {5};
  spec.mem_b = {-1};
  spec.mem_w = {-4};
  EXPECT_DOUBLE_EQ(spec.build().activation_unit(), 5.0);
}

// What building `spec` from "scenario.json" says, or "no error".
std::string message_of(const ProblemSpec& spec) {
  try {
    spec.build("scenario.json");
  } catch (const InputError& e) {
    return std::string(e.what());
  }
  return std::string("no error");
}

// p=4, m=8, unit times: valid.
ProblemSpec good_spec() {
  ProblemSpec good;
  good.devices = 4;
  good.microbatches = 8;
  good.t_f = good.t_b = good.t_w = {1.0};
  return good;
}

TEST(Problem, ErrorsNameTheFieldAndValue) {
  const ProblemSpec good = good_spec();
  ASSERT_EQ(message_of(good), "no error");

  ProblemSpec bad = good;
  bad.devices = 0;
  EXPECT_NE(message_of(bad).find("p is 0: give the number of pipeline devices"), std::string::npos) << message_of(bad);
  bad = good;
  bad.microbatches = -1;
  EXPECT_NE(message_of(bad).find("m is -1: give the number of microbatches"), std::string::npos);
  bad = good;
  bad.t_b = {-2.0};
  EXPECT_NE(message_of(bad).find("'t_b' has value -2"), std::string::npos) << message_of(bad);
  bad = good;
  bad.t_f = {1, 2, 3};
  EXPECT_NE(message_of(bad).find("'t_f' has 3 values"), std::string::npos) << message_of(bad);
  bad = good;
  bad.mem_b = {-0.25};
  EXPECT_NE(message_of(bad).find("mem_f + mem_b + mem_w must be 0"), std::string::npos) << message_of(bad);
  EXPECT_NE(message_of(bad).find("scenario.json"), std::string::npos);
}

// Finite values whose sums overflow: refused up front, not an infinite makespan or a NaN bubble.
TEST(Problem, TimesMemoryAndBytesWhoseSumsWouldOverflowAreRefused) {
  const ProblemSpec good = good_spec();
  ProblemSpec bad = good;
  bad.t_f = {1e308};
  EXPECT_NE(message_of(bad).find("scenario.json: the times add up to inf per step"), std::string::npos)
      << message_of(bad);
  bad.t_f = {1e249};  // finite, and 8 x 4 x 2 of it is above the bound
  EXPECT_NE(message_of(bad).find("above 1e+250"), std::string::npos) << message_of(bad);
  bad.t_f = {1e247};  // 1e247 x 8 microbatches x 4 stages: within it
  EXPECT_EQ(message_of(bad), "no error");
  bad = good;
  bad.t_opt = {1e250, 1e250};
  bad.t_opt.resize(4, 0.0);
  EXPECT_NE(message_of(bad).find("the times add up"), std::string::npos) << message_of(bad);
  bad = good;
  bad.mem_f = {1e300};
  bad.mem_b = {-5e299};
  bad.mem_w = {-5e299};
  EXPECT_NE(message_of(bad).find("the memory of all microbatches adds up"), std::string::npos) << message_of(bad);
  bad = good;
  bad.bytes_act = 1e300;
  EXPECT_NE(message_of(bad).find("field 'bytes_act' is 1e+300"), std::string::npos) << message_of(bad);
}

TEST(Problem, JsonUnknownFieldAndTypesAreErrors) {
  using nlohmann::json;
  EXPECT_THROW(problem_spec_from_json(json{{"p", 4}, {"bogus", 1}}, "f.json"), InputError);
  EXPECT_THROW(problem_spec_from_json(json{{"p", 4.5}}, "f.json"), InputError);
  EXPECT_THROW(problem_spec_from_json(json{{"t_f", "fast"}}, "f.json"), InputError);
  try {
    problem_spec_from_json(json{{"p", 4}, {"bogus", 1}}, "f.json");
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown field 'bogus'"), std::string::npos);
  }
  const json object = {{"p", 4}, {"m", 8}, {"t_f", 1.5}, {"t_b", {1, 2, 3, 4}}, {"t_w", 1}, {"mem_limit", "2p"}};
  const ProblemSpec spec = problem_spec_from_json(object, "f.json");
  EXPECT_EQ(problem_spec_from_json(to_json(spec), "again").build().t_b, spec.build().t_b);
  EXPECT_EQ(to_json(spec)["mem_limit"], "2p");
}

TEST(Problem, NumberLists) {
  EXPECT_EQ(parse_number_list("1,2.5, 3", "--tf"), (std::vector<double>{1, 2.5, 3}));
  EXPECT_THROW(parse_number_list("1,,3", "--tf"), InputError);
  EXPECT_THROW(parse_number_list("x", "--tf"), InputError);
}

}  // namespace
}  // namespace zb
