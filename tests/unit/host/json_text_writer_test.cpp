// The JSON text writer must produce exactly what nlohmann::json::dump() produces for the same content:
// escaping (control characters, quotes, backslashes, UTF-8), the exception on invalid UTF-8, and the
// layout (indentation, separators, empty containers).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ast/unicode.hpp"
#include "json/json_text_writer.hpp"

namespace htp {
namespace {

/// nlohmann's dump of one string, or its exception message prefixed with "throws: ".
std::string nlohmann_string(const std::string &s) {
  try {
    return nlohmann::json(s).dump();
  } catch (const nlohmann::json::type_error &e) {
    return std::string("throws: ") + e.what();
  }
}

/// append_json_string with InvalidUtf8::Throw, in the same form.
std::string writer_string(const std::string &s) {
  std::string out = "unchanged prefix ";
  try {
    append_json_string(out, s, InvalidUtf8::Throw);
    EXPECT_EQ(out.rfind("unchanged prefix ", 0), 0u);
    return out.substr(17);
  } catch (const nlohmann::json::type_error &e) {
    return std::string("throws: ") + e.what();
  }
}

/// The AST writer's former escaping (json.dumps rules, invalid UTF-8 as U+FFFD), the reference for Replace.
std::string reference_replace(std::string_view s) {
  std::string out = "\"";
  for (size_t pos = 0; pos < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[pos]);
    if (c >= 0x80) {
      size_t at = pos;
      if (ast::decode_strict_utf8(s, pos))
        out.append(s.substr(at, pos - at));
      else
        ast::append_utf8(out, ast::kReplacementChar);
      continue;
    }
    ++pos;
    switch (c) {
    case '"': out += "\\\""; break;
    case '\\': out += "\\\\"; break;
    case '\n': out += "\\n"; break;
    case '\r': out += "\\r"; break;
    case '\t': out += "\\t"; break;
    case '\b': out += "\\b"; break;
    case '\f': out += "\\f"; break;
    default:
      if (c < 0x20) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\u%04x", c);
        out += buf;
      } else {
        out += static_cast<char>(c);
      }
    }
  }
  return out + "\"";
}

/// Pieces that stress escaping and UTF-8 validation: every control character, quotes, backslash, DEL,
/// well-formed sequences of each length and at each boundary, and every kind of malformed sequence.
std::vector<std::string> adversarial_pieces() {
  std::vector<std::string> p;
  for (int c = 0; c < 0x20; ++c)
    p.push_back(std::string(1, static_cast<char>(c)));
  for (const char *s : {"\"", "\\", "/", "\x7f", "a", "Z", "0", " ", "IR.F1_2(kind=dense)", "\\u0000", "\\\"",
                        // well-formed: U+0080, U+07FF, U+0800, U+FFFD, U+FFFF, U+10000, U+10FFFF, é, €, 😀
                        "\xC2\x80", "\xDF\xBF", "\xE0\xA0\x80", "\xEF\xBF\xBD", "\xEF\xBF\xBF", "\xF0\x90\x80\x80",
                        "\xF4\x8F\xBF\xBF", "\xC3\xA9", "\xE2\x82\xAC", "\xF0\x9F\x98\x80", "\xED\x9F\xBF",
                        "\xEE\x80\x80",
                        // malformed: stray continuation, C0/C1 and F5+ leads, overlong forms, surrogates,
                        // above U+10FFFF, truncated sequences, a lead followed by ASCII
                        "\x80", "\xBF", "\xC0\x80", "\xC1\xBF", "\xF5\x80\x80\x80", "\xFF", "\xFE",
                        "\xE0\x80\x80", "\xE0\x9F\xBF", "\xF0\x80\x80\x80", "\xF0\x8F\xBF\xBF", "\xED\xA0\x80",
                        "\xED\xBF\xBF", "\xED\xA0", "\xF4\x90\x80\x80", "\xC2", "\xE2\x82", "\xF0\x9F\x98",
                        "\xC2" "A", "\xE2" "A" "\xAC"})
    p.push_back(s);
  p.push_back(std::string("\0", 1));
  return p;
}

/// Random strings built from adversarial pieces and random bytes.
std::vector<std::string> random_strings(size_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  const std::vector<std::string> pieces = adversarial_pieces();
  std::vector<std::string> out;
  for (size_t i = 0; i < count; ++i) {
    std::string s;
    size_t n = rng() % 12;
    for (size_t k = 0; k < n; ++k) {
      switch (rng() % 4) {
      case 0: s += static_cast<char>(rng() % 256); break;      // any byte
      case 1: s += static_cast<char>(0x20 + rng() % 0x5F); break; // printable ASCII
      default: s += pieces[rng() % pieces.size()];
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

TEST(JsonString, EveryControlCharacterIsEscapedAsNlohmannDoes) {
  for (int c = 0; c < 0x20; ++c) {
    std::string s(1, static_cast<char>(c));
    EXPECT_EQ(writer_string(s), nlohmann_string(s)) << "byte " << c;
  }
  EXPECT_EQ(writer_string("\x01"), "\"\\u0001\"");
  EXPECT_EQ(writer_string("\x1f"), "\"\\u001f\"");
  EXPECT_EQ(writer_string("\n\t\r\b\f"), "\"\\n\\t\\r\\b\\f\"");
}

TEST(JsonString, QuotesBackslashesAndDelAreWrittenAsNlohmannDoes) {
  for (const std::string s : {"\"", "\\", "a\"b\\c", "\x7f", "/", "\\u0041", ""})
    EXPECT_EQ(writer_string(s), nlohmann_string(s)) << s;
  EXPECT_EQ(writer_string("a\"b\\c"), "\"a\\\"b\\\\c\"");
}

TEST(JsonString, UnicodeIsWrittenAsIs) {
  const std::string s = "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF";
  EXPECT_EQ(writer_string(s), "\"" + s + "\"");
  EXPECT_EQ(writer_string(s), nlohmann_string(s));
}

TEST(JsonString, EachAdversarialPieceMatchesNlohmannIncludingItsException) {
  for (const std::string &s : adversarial_pieces())
    EXPECT_EQ(writer_string(s), nlohmann_string(s)) << ::testing::PrintToString(s);
  EXPECT_EQ(writer_string("ok\xED\xA0\x80"), nlohmann_string("ok\xED\xA0\x80"));
  EXPECT_NE(writer_string("ok\xED\xA0\x80").find("throws: [json.exception.type_error.316]"), std::string::npos);
}

TEST(JsonString, RandomAdversarialStringsMatchNlohmann) {
  size_t threw = 0;
  for (const std::string &s : random_strings(20000, 22)) {
    std::string mine = writer_string(s), theirs = nlohmann_string(s);
    ASSERT_EQ(mine, theirs) << ::testing::PrintToString(s);
    threw += mine.rfind("throws: ", 0) == 0;
  }
  // Both outcomes are exercised.
  EXPECT_GT(threw, 1000u);
  EXPECT_LT(threw, 19000u);
}

TEST(JsonString, ReplaceWritesReplacementCharactersAsTheAstWriterDid) {
  for (const std::string &s : adversarial_pieces()) {
    std::string out;
    append_json_string(out, s, InvalidUtf8::Replace);
    EXPECT_EQ(out, reference_replace(s)) << ::testing::PrintToString(s);
  }
  for (const std::string &s : random_strings(20000, 7)) {
    std::string out;
    append_json_string(out, s, InvalidUtf8::Replace);
    ASSERT_EQ(out, reference_replace(s)) << ::testing::PrintToString(s);
  }
  std::string out;
  append_json_string(out, "a\xED\xA0\x80" "b\xFF", InvalidUtf8::Replace);
  EXPECT_EQ(out, "\"a\xEF\xBF\xBD" "b\xEF\xBF\xBD\"");
}

/// A random document: nested objects and arrays (some empty), strings, integers, null and booleans.
nlohmann::ordered_json random_document(std::mt19937 &rng, const std::vector<std::string> &strings, int depth) {
  const size_t pick = depth > 4 ? 2 + rng() % 7 : rng() % 9;
  switch (pick) {
  case 0: {
    nlohmann::ordered_json o = nlohmann::ordered_json::object();
    for (size_t n = rng() % 4, i = 0; i < n; ++i)
      o[strings[rng() % strings.size()]] = random_document(rng, strings, depth + 1);
    return o;
  }
  case 1: {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    for (size_t n = rng() % 4, i = 0; i < n; ++i)
      a.push_back(random_document(rng, strings, depth + 1));
    return a;
  }
  case 2: return strings[rng() % strings.size()];
  case 3: return nullptr;
  case 4: return rng() % 2 == 0;
  case 5: return static_cast<uint32_t>(rng());
  case 6: return -static_cast<int64_t>(rng() % 100000) - 1;
  case 7: return static_cast<double>(rng()) / 7.0;
  default: return static_cast<uint64_t>(rng()) << 32 | rng();
  }
}

TEST(JsonTextWriter, LayoutMatchesNlohmannDumpAtEveryIndent) {
  std::mt19937 rng(5);
  std::vector<std::string> strings = {"", "a", "key", "with space", "\xC3\xA9t\xC3\xA9", "q\"uote", "ctl\x01"};
  for (int round = 0; round < 500; ++round) {
    nlohmann::ordered_json doc = nlohmann::ordered_json::array();
    for (int i = 0; i < 4; ++i)
      doc.push_back(random_document(rng, strings, 0));
    if (round % 2) doc = {{"root", doc}, {"more", random_document(rng, strings, 1)}};
    for (int indent : {-1, 0, 2, 4}) {
      JsonTextWriter w(indent);
      w.value(doc);
      ASSERT_EQ(w.take(), doc.dump(indent)) << "indent " << indent << " round " << round;
    }
  }
}

TEST(JsonTextWriter, EmptyContainersAreWrittenOnOneLine) {
  JsonTextWriter w(2);
  w.begin_object();
  w.key("a");
  w.begin_array();
  w.end_array();
  w.key("o");
  w.begin_object();
  w.end_object();
  w.end_object();
  EXPECT_EQ(w.take(), "{\n  \"a\": [],\n  \"o\": {}\n}");
}

TEST(JsonTextWriter, PreRenderedValuesFollowSeparate) {
  JsonTextWriter w(2);
  w.begin_array();
  w.separate();
  w.buffer() += "1.5";
  w.raw("2.5");
  w.buffer() += w.element_separator(w.depth()) + "3.5";
  w.end_array();
  EXPECT_EQ(w.take(), "[\n  1.5,\n  2.5,\n  3.5\n]");
  JsonTextWriter compact(-1);
  compact.begin_array();
  EXPECT_EQ(compact.element_separator(compact.depth()), ",");
  EXPECT_EQ(w.element_separator(3), ",\n      ");
}

TEST(JsonTextWriter, InvalidUtf8InAKeyThrowsAsNlohmannDoes) {
  JsonTextWriter w(2);
  w.begin_object();
  EXPECT_THROW(w.key("k\xFF"), nlohmann::json::type_error);
  JsonTextWriter r(2, InvalidUtf8::Replace);
  r.begin_object();
  r.key("k\xFF");
  r.null();
  r.end_object();
  EXPECT_EQ(r.take(), "{\n  \"k\xEF\xBF\xBD\": null\n}");
}

} // namespace
} // namespace htp
