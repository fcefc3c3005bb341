// Tokens, the text form and the JSON form of schedules, and their round trips.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "sim/support/error.h"
#include "sim/core/generators/generator_registry.h"
#include "sim/core/schedule.h"
#include "tests/testing/problems.h"

namespace zb {
namespace {

TEST(Tokens, FormatAndParse) {
  EXPECT_EQ(to_token({Pass::F, 3, 0}), "F3");
  EXPECT_EQ(to_token({Pass::BW, 12, 0}), "BW12");
  EXPECT_EQ(to_token({Pass::B, 3, 1}), "B3.1");
  EXPECT_EQ(parse_token("W7.2", "t"), (Action{Pass::W, 7, 2}));
  EXPECT_EQ(parse_token("BW0", "t"), (Action{Pass::BW, 0, 0}));
  for (const char* bad : {"X3", "F", "F-1", "F3.", "F3.x", "BW", "f3", "F3x"}) {
    EXPECT_THROW(parse_token(bad, "t"), InputError) << bad;
  }
}

TEST(TextForm, RoundTripsEveryGenerator) {
  const auto registry = GeneratorRegistry::with_builtins();
  for (const auto& name : registry.names()) {
    const Problem problem = testing::generator_spec(registry.get(name), testing::uniform_spec(4, 8)).build();
    const Schedule schedule = generate(registry, name, problem);
    const Schedule text_back = parse_schedule_text(to_text(schedule), "text");
    EXPECT_EQ(text_back.devices, schedule.devices) << name;
    const Schedule json_back = schedule_from_json(nlohmann::json::parse(to_json(schedule).dump()), "json");
    EXPECT_EQ(json_back.devices, schedule.devices) << name;
    EXPECT_EQ(json_back.name, name);
  }
}

// Actions name chunks, not stages: the same lists are a different schedule under another
// placement, so generated schedules carry theirs (and their chunk count) in both forms.
TEST(TextForm, GeneratedSchedulesCarryTheirPlacementAndChunks) {
  const Problem problem = testing::uniform_problem(4, 8, 1, 1, 1, 0, 2);
  const Schedule schedule = generate(GeneratorRegistry::with_builtins(), "1f1b-i", problem);
  const std::string text = to_text(schedule);
  EXPECT_EQ(text.substr(0, text.find("d0:")), "placement: interleaved\nchunks: 2\n");
  const Schedule back = parse_schedule_text(text, "t");
  EXPECT_EQ(back.placement, Placement::interleaved);
  EXPECT_EQ(back.chunks, 2);
  const nlohmann::json json = to_json(schedule);
  EXPECT_EQ(json["placement"], "interleaved");
  EXPECT_EQ(json["chunks"], 2);
  const Schedule json_back = schedule_from_json(nlohmann::json::parse(json.dump()), "j");
  EXPECT_EQ(json_back.placement, Placement::interleaved);
  EXPECT_EQ(json_back.chunks, 2);
  // A file without headers states nothing (old files still read as before).
  const Schedule bare = parse_schedule_text("d0: F0 BW0\n", "bare");
  EXPECT_FALSE(bare.placement);
  EXPECT_FALSE(bare.chunks);
  EXPECT_EQ(bare.chunk_count(), 1);
}

TEST(TextForm, HeaderErrorsNameTheLine) {
  auto error_of = [](const std::string& text) {
    try {
      parse_schedule_text(text, "h.txt");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error_of("placement: diagonal\nd0: F0 BW0\n").find("h.txt:1: placement: unknown placement 'diagonal'"),
            std::string::npos);
  EXPECT_NE(error_of("chunks: 0\nd0: F0 BW0\n").find("h.txt:1: chunks '0'"), std::string::npos);
  EXPECT_NE(error_of("d0: F0 BW0\nplacement: vshape\n").find("h.txt:2: header line 'placement: vshape' after"),
            std::string::npos);
  EXPECT_NE(error_of("chunks: 2\nchunks: 2\nd0: F0 BW0\n").find("chunks given twice"), std::string::npos);
  EXPECT_THROW(schedule_from_json(nlohmann::json::parse(R"({"placement": 3, "devices": [["F0"]]})"), "j"), InputError);
  EXPECT_THROW(schedule_from_json(nlohmann::json::parse(R"({"chunks": 0, "devices": [["F0"]]})"), "j"), InputError);
}

TEST(TextForm, CommentsAndErrorsWithLineNumbers) {
  const Schedule schedule = parse_schedule_text("# a comment\n\nd0: F0 BW0\nd1:  F0   BW0 \n", "s.txt");
  EXPECT_EQ(schedule.device_count(), 2);
  EXPECT_EQ(schedule.devices[1].size(), 2u);
  try {
    parse_schedule_text("d0: F0\nd1: F0 Q1\n", "s.txt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("s.txt:2"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'Q1'"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_schedule_text("d1: F0\n", "s.txt"), InputError);
  EXPECT_THROW(parse_schedule_text("F0 F1\n", "s.txt"), InputError);
  EXPECT_THROW(parse_schedule_text("", "s.txt"), InputError);
}

}  // namespace
}  // namespace zb
