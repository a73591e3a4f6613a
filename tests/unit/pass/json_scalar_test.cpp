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
