// The SDK's typed attribute values (htp::json_scalar): what attr_string / attr_int / attr_bool accept.
#include <htp/ast.hpp>

#include <gtest/gtest.h>

namespace js = htp::json_scalar;

TEST(JsonScalar, StringsRoundTripThroughQuote) {
  for (std::string v : {std::string("tile"), std::string("a \"quoted\" \\ path\n\t"), std::string("\x01\x1f"),
                        std::string("ünïcödé ✓")}) {
    EXPECT_EQ(js::parse_string(js::quote(v)), v) << js::quote(v);
  }
  EXPECT_EQ(js::quote("a\"b"), "\"a\\\"b\"");
}

TEST(JsonScalar, StringEscapesIncludingSurrogatePairs) {
  EXPECT_EQ(js::parse_string(R"("\u0041\/\b")"), std::string("A/\b"));
  EXPECT_EQ(js::parse_string(R"("\u00e9")"), std::string("\xc3\xa9"));
  EXPECT_EQ(js::parse_string(R"("\ud83d\ude00")"), std::string("\xf0\x9f\x98\x80"));
}

TEST(JsonScalar, StringRejectsWhatIsNotAStringLiteral) {
  for (const char *bad : {"tile", "\"unterminated", "\"bad \\x escape\"", "\"\\u00zz\"", "\"\\ud83d\"", "\"\\ude00\"",
                          "\"raw \" quote\"", "42", "\"", "\"\\\""})
    EXPECT_EQ(js::parse_string(bad), std::nullopt) << bad;
}

TEST(JsonScalar, IntegersFitting64Bits) {
  EXPECT_EQ(js::parse_int("42"), 42);
  EXPECT_EQ(js::parse_int("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(js::parse_int("9223372036854775808"), std::nullopt);
  EXPECT_EQ(js::parse_int("1.5"), std::nullopt);
  EXPECT_EQ(js::parse_int("\"42\""), std::nullopt);
  EXPECT_EQ(js::parse_int(""), std::nullopt);
}

TEST(JsonScalar, Booleans) {
  EXPECT_EQ(js::parse_bool("true"), true);
  EXPECT_EQ(js::parse_bool("false"), false);
  EXPECT_EQ(js::parse_bool("1"), std::nullopt);
}

// htp::parse_json (what attr_json parses with) builds the value bottom-up; it gives what the library's own parser
// gives, key order and repeated keys included, for both of its object types.
#include <nlohmann/json.hpp>

TEST(ParseJson, GivesWhatTheLibrarysParserGives) {
  for (const char *text :
       {R"({"b": 1, "a": [1, -2, 3.5, 18446744073709551615, "x\u00e9", null, true, false, {}, []], "c": {"z": {}, "y": [[]]}})",
        R"({"k": 1, "k": 2, "j": {"k": [3]}, "k": 4})", R"([])", R"("text")", R"(-0.0)", R"({"": {"": [""]}})"}) {
    EXPECT_EQ(htp::parse_json<nlohmann::ordered_json>(text), nlohmann::ordered_json::parse(text)) << text;
    EXPECT_EQ(htp::parse_json<nlohmann::ordered_json>(text)->dump(), nlohmann::ordered_json::parse(text).dump()) << text;
    EXPECT_EQ(htp::parse_json<nlohmann::json>(text), nlohmann::json::parse(text)) << text;
  }
  for (const char *bad : {"", "{", R"({"a" 1})", "[1,]", "01", "{} {}", "nul"})
    EXPECT_EQ(htp::parse_json<nlohmann::ordered_json>(bad), std::nullopt) << bad;
}

TEST(ParseJson, DeepNestsOfObjectsAfterOtherMembers) {
  // An if chain's statements: each object's deep member comes before later ones (the case that copied).
  std::string text = "0";
  for (int i = 0; i < 3000; ++i) text = R"({"op": "if", "else_body": [)" + text + R"(], "span": [1, 2]})";
  auto j = htp::parse_json<nlohmann::ordered_json>(text);
  ASSERT_TRUE(j.has_value());
  EXPECT_EQ(j->begin().key(), "op");
  const nlohmann::ordered_json *at = &*j;
  int depth = 0;
  while (at->is_object()) at = &(*at)["else_body"][0], ++depth;
  EXPECT_EQ(depth, 3000);
}
