// The one JSON parse owner: every parser failure is bad input naming its source, and nesting is
// bounded before a recursive reader could overflow the stack.
#include <gtest/gtest.h>

#include <string>

#include "sim/support/json_text.h"
#include "tests/testing/input_error.h"

namespace zb {
namespace {

std::string message_of(const std::string& text) {
  return testing::error_of([&] { parse_json(text, "in.json"); });
}

TEST(JsonText, ParsesOrdinaryDocumentsAndKeepsOrderWhenAsked) {
  EXPECT_EQ(parse_json(R"({"p": 4, "t_f": 1.5})", "x")["t_f"], 1.5);
  const auto ordered = parse_ordered_json(R"({"z": 1, "a": 2})", "x");
  EXPECT_EQ(ordered.begin().key(), "z");
}

TEST(JsonText, NestingBeyondTheLimitIsBadInputNotACrash) {
  const std::string deep = std::string(3000, '[') + std::string(3000, ']');
  const std::string message = message_of(deep);
  EXPECT_NE(message.find("in.json: malformed JSON: nested deeper than 256 levels"), std::string::npos) << message;
  // At the limit itself the document is read.
  const std::string at_limit = std::string(kMaxJsonDepth, '[') + std::string(kMaxJsonDepth, ']');
  EXPECT_NO_THROW(parse_json(at_limit, "x"));
  // Objects count as levels too.
  std::string objects;
  for (int i = 0; i < 400; ++i) objects += "{\"a\":";
  objects += "1" + std::string(400, '}');
  EXPECT_NE(message_of(objects).find("nested deeper"), std::string::npos);
}

TEST(JsonText, NumbersOutOfRangeAndSyntaxErrorsNameTheSource) {
  EXPECT_NE(message_of(R"({"t_f": 1e400})").find("in.json: malformed JSON"), std::string::npos);
  EXPECT_NE(message_of(R"({"p": 4,)").find("in.json: malformed JSON"), std::string::npos);
  EXPECT_NE(message_of("").find("in.json: malformed JSON"), std::string::npos);
}

}  // namespace
}  // namespace zb
