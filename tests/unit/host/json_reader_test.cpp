#include <gtest/gtest.h>

#include "json/json_reader.hpp"

TEST(JsonReader, MissingFieldNamesThePath) {
  auto j = nlohmann::json::parse(R"({"a": {"b": [1, {"c": 2}]}})");
  htp::JsonReader r(j);
  try {
    r.at("a").at("b").at(1).at("d");
    FAIL();
  } catch (const htp::JsonSchemaError &e) {
    EXPECT_STREQ(e.what(), "$.a.b[1]: missing required field 'd'");
  }
}

TEST(JsonReader, WrongTypeNamesBothTypes) {
  auto j = nlohmann::json::parse(R"({"n": "seven"})");
  try {
    (void)htp::JsonReader(j).at("n").integer();
    FAIL();
  } catch (const htp::JsonSchemaError &e) {
    EXPECT_STREQ(e.what(), "$.n: expected an integer, got a string");
  }
}

TEST(JsonReader, TruncatedTextIsADiagnosticWithTheOffset) {
  auto r = htp::parse_json_text("{\"a\": [1, 2", "x.json");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("'x.json' is not valid JSON: byte"), std::string::npos) << r.error().message;
}
