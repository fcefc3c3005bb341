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

TEST(JsonText, ARepeatedKeyIsRefusedWithItsNameAtAnyDepth) {
  const std::string top = message_of(R"({"p": 4, "m": 8, "p": 16})");
  EXPECT_NE(top.find("in.json: malformed JSON: the key \"p\" appears twice in one object"), std::string::npos) << top;
  EXPECT_NE(message_of(R"({"a": [{"x": 1, "x": 2}]})").find("\"x\" appears twice"), std::string::npos);
  EXPECT_THROW(parse_ordered_json(R"({"z": 1, "z": 1})", "x"), InputError);
  // The same key in two objects, or in an object and its child, is no repetition.
  const auto document = parse_json(R"({"x": {"x": 1}, "y": [{"x": 2}, {"x": 3}]})", "x");
  EXPECT_EQ(document["x"]["x"], 1);
  EXPECT_EQ(document["y"][1]["x"], 3);
}

TEST(JsonText, ANulByteOrAnythingAfterTheDocumentIsRefused) {
  // A valid document followed by the zeros of a file cut short by a crash.
  const std::string zero_filled = std::string(R"({"p": 4})") + std::string(64, '\0');
  const std::string message = message_of(zero_filled);
  EXPECT_NE(message.find("in.json: malformed JSON: a NUL byte at offset 8"), std::string::npos) << message;
  EXPECT_NE(message_of(std::string("{\"p\": 4}\0garbage", 17)).find("NUL byte"), std::string::npos);
  EXPECT_NE(message_of(R"({"p": 4} {"p": 5})").find("in.json: malformed JSON"), std::string::npos);
  EXPECT_NE(message_of(R"([1, 2] x)").find("in.json: malformed JSON"), std::string::npos);
  // Trailing whitespace is part of a well-formed text; an escaped NUL in a string is a character.
  EXPECT_EQ(parse_json("{\"p\": 4}\n\n", "x")["p"], 4);
  EXPECT_EQ(parse_json(R"({"s": "a\u0000b"})", "x")["s"].get<std::string>().size(), 3u);
}

TEST(JsonText, EveryKindOfValueIsBuiltAsTheLibraryBuildsIt) {
  const std::string text =
      R"({"null": null, "t": true, "f": false, "i": -7, "u": 18446744073709551615, "d": 2.5e-3, "s": "\u00e9",)"
      R"( "a": [[], {}, [1, [2, {"k": [3]}]]], "o": {"n": {"m": {}}}})";
  EXPECT_EQ(parse_json(text, "x"), nlohmann::json::parse(text));
  EXPECT_EQ(parse_ordered_json(text, "x"), nlohmann::ordered_json::parse(text));
  EXPECT_EQ(parse_json("3", "x"), 3);
  EXPECT_EQ(parse_json(R"("only a string")", "x"), "only a string");
}

}  // namespace
}  // namespace zb
