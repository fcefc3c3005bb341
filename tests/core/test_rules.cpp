// The core's one-owner rules: memory deltas, the over-limit judgement, time units.
#include <gtest/gtest.h>

#include "sim/support/csv_field.h"
#include "sim/support/error.h"
#include "sim/core/evaluator.h"
#include "sim/core/generators/generators.h"
#include "sim/core/memory.h"
#include "sim/support/time_units.h"
#include "sim/formats/trace_json.h"
#include "sim/core/validator.h"
#include "tests/testing/problems.h"

#include <nlohmann/json.hpp>

namespace zb {
namespace {

TEST(MemoryRules, FAllocatesAtItsStartTheBackwardsFreeAtTheirEnd) {
  ProblemSpec spec = testing::uniform_spec(2, 2);
  spec.mem_f = {3};
  spec.mem_b = {-1};
  spec.mem_w = {-2};
  const Problem problem = spec.build();
  EXPECT_EQ(memory_delta(problem, Pass::F, 1).at_start, 3);
  EXPECT_EQ(memory_delta(problem, Pass::F, 1).at_end, 0);
  EXPECT_EQ(memory_delta(problem, Pass::B, 0).at_end, -1);
  EXPECT_EQ(memory_delta(problem, Pass::W, 0).at_end, -2);
  EXPECT_EQ(memory_delta(problem, Pass::BW, 0).at_end, -3);
  EXPECT_EQ(memory_delta(problem, Pass::BW, 0).net(), -3);
  // The evaluator's timeline and the order-based peak agree with the rule (one owner).
  const Schedule gpipe = make_gpipe(problem);
  EXPECT_EQ(peak_memory_by_order(problem, gpipe), (std::vector<double>{6, 6}));
  EXPECT_EQ(evaluate(problem, gpipe).metrics.peak_memory, (std::vector<double>{6, 6}));
}

TEST(MemoryRules, OneOverLimitJudgementWithItsTolerance) {
  ProblemSpec spec = testing::uniform_spec(4, 8);
  spec.mem_limit = MemoryLimit::parse("1p", "t");
  const Problem problem = spec.build();
  EXPECT_FALSE(first_over_limit(problem, {4, 4, 4, 4}));                   // exactly the limit fits
  EXPECT_FALSE(first_over_limit(problem, {4 * (1 + 1e-12), 1, 1, 1}));    // rounding of summed deltas
  const auto over = first_over_limit(problem, {1, 4.5, 8, 1});
  ASSERT_TRUE(over);
  EXPECT_EQ(over->device, 1);
  EXPECT_EQ(over->reason(), "d1 peaks at 4.5 > limit 4 (1p)");
  spec.mem_limit = MemoryLimit::parse("4", "t");
  EXPECT_EQ(first_over_limit(spec.build(), {5, 0, 0, 0})->reason(), "d0 peaks at 5 > limit 4");
  spec.mem_limit.reset();
  EXPECT_FALSE(first_over_limit(spec.build(), {100, 0, 0, 0}));
  EXPECT_EQ(first_over_limit(std::vector<double>{1, 2.5}, 2.0)->device, 1);
}

TEST(TimeUnits, ParsedOnceUnknownOnesListTheValidOnes) {
  EXPECT_EQ(parse_time_unit("us", "t"), TimeUnit::us);
  EXPECT_EQ(time_unit_name(TimeUnit::ns), "ns");
  EXPECT_DOUBLE_EQ(seconds_per(TimeUnit::ms), 1e-3);
  EXPECT_DOUBLE_EQ(microseconds_per(TimeUnit::s), 1e6);
  try {
    parse_time_unit("min", "--time-unit");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--time-unit: unknown time unit 'min' (valid: s, ms, us, ns)");
  }
  nlohmann::json problem = to_json(testing::uniform_spec(2, 2));
  problem["time_unit"] = "minutes";
  EXPECT_THROW(problem_spec_from_json(problem, "s.json"), InputError);
  // A trace file with an unknown unit is refused too (it would be drawn on a wrong axis).
  Trace trace = evaluate(testing::uniform_problem(2, 2, 1, 1, 1), make_1f1b(testing::uniform_problem(2, 2, 1, 1, 1)));
  nlohmann::json json = to_json(trace);
  json["meta"]["time_unit"] = "fortnight";
  EXPECT_THROW(trace_from_json(json, "t.json"), InputError);
}

// One CSV quoting for every writer (the results writer did not quote a carriage return).
TEST(CsvField, QuotesCommasQuotesAndLineBreaks) {
  EXPECT_EQ(csv_field("zb-h1"), "zb-h1");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_field("one\ntwo"), "\"one\ntwo\"");
  EXPECT_EQ(csv_field("one\rtwo"), "\"one\rtwo\"");
}

}  // namespace
}  // namespace zb
