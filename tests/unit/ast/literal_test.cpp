// Python's repr() spelling of literals, and its notion of printable characters.
#include <gtest/gtest.h>

#include <cmath>

#include "ast/literal.hpp"
#include "ast/unicode.hpp"

namespace htp::ast {
namespace {

TEST(AstLiteral, FloatReprMatchesPython) {
  EXPECT_EQ(float_repr(1.0), "1.0");
  EXPECT_EQ(float_repr(0.1), "0.1");
  EXPECT_EQ(float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(float_repr(1e16), "1e+16");
  EXPECT_EQ(float_repr(1.5e16), "1.5e+16");
  EXPECT_EQ(float_repr(0.0001), "0.0001");
  EXPECT_EQ(float_repr(0.00001), "1e-05");
  EXPECT_EQ(float_repr(123.456), "123.456");
  EXPECT_EQ(float_repr(-0.0), "-0.0");
  EXPECT_EQ(float_repr(5e-324), "5e-324");
  EXPECT_EQ(float_repr(1.7976931348623157e308), "1.7976931348623157e+308");
  EXPECT_EQ(float_repr(INFINITY), "inf");
  EXPECT_EQ(float_repr(-INFINITY), "-inf");
  EXPECT_EQ(float_repr(NAN), "nan");
}

TEST(AstLiteral, ComplexReprMatchesPython) {
  EXPECT_EQ(complex_repr(0, 1), "1j");
  EXPECT_EQ(complex_repr(0, 1.5), "1.5j");
  EXPECT_EQ(complex_repr(1, 2), "(1+2j)");
  EXPECT_EQ(complex_repr(-0.0, -1), "(-0-1j)");
  EXPECT_EQ(complex_repr(0, INFINITY), "infj");
  EXPECT_EQ(complex_repr(1, NAN), "(1+nanj)");
}

TEST(AstLiteral, StrReprChoosesQuotesAndEscapesAsPython) {
  EXPECT_EQ(str_repr("abc"), "'abc'");
  EXPECT_EQ(str_repr("it's"), "\"it's\"");
  EXPECT_EQ(str_repr("'\""), "'\\'\"'");
  EXPECT_EQ(str_repr("a\\b\n\t\r\x01\x7f"), "'a\\\\b\\n\\t\\r\\x01\\x7f'");
  EXPECT_EQ(str_repr("\xC3\xA9\xC2\xA0\xE2\x80\xA8"), "'\xC3\xA9\\xa0\\u2028'");
  EXPECT_EQ(str_repr("\xF0\x9F\x98\x80\xF3\xA0\x80\x81"), "'\xF0\x9F\x98\x80\\U000e0001'");
  EXPECT_EQ(str_repr("\xED\xA0\x80"), "'\\ud800'");
}

TEST(AstLiteral, BytesReprMatchesPython) {
  EXPECT_EQ(bytes_repr(std::string("a'\0\xff\\", 5)), "b\"a'\\x00\\xff\\\\\"");
  EXPECT_EQ(bytes_repr("\t\n\r"), "b'\\t\\n\\r'");
}

TEST(AstUnicode, PrintableFollowsPython) {
  EXPECT_TRUE(is_printable('a'));
  EXPECT_TRUE(is_printable(' '));
  EXPECT_FALSE(is_printable('\n'));
  EXPECT_FALSE(is_printable(0xA0)) << "no-break space is a separator";
  EXPECT_TRUE(is_printable(0xE9));
  EXPECT_FALSE(is_printable(0xD800));
  EXPECT_TRUE(is_printable(0x1F600));
  EXPECT_FALSE(is_printable(0x10FFFF));
}

TEST(AstUnicode, Utf8CodecHandlesSurrogatesAndInvalidBytes) {
  std::string s;
  append_utf8(s, 0xD800);
  EXPECT_EQ(s, "\xED\xA0\x80");
  EXPECT_TRUE(has_surrogates(s));
  EXPECT_FALSE(is_valid_utf8(s));
  size_t pos = 0;
  EXPECT_EQ(decode_utf8(s, pos), 0xD800u);
  pos = 0;
  EXPECT_EQ(decode_utf8("\xC0\x80", pos), kReplacementChar) << "overlong";
  EXPECT_EQ(pos, 1u);
  EXPECT_TRUE(is_valid_utf8("h\xC3\xA9 \xEF\xBF\xBD"));
}

// Text a plugin hands the host: an AST field takes generalized UTF-8 (surrogates, as Python strings hold them)
// and refuses stray bytes; a diagnostic's text is kept readable with U+FFFD for each stray byte.
TEST(Unicode, GeneralizedUtf8AndReplacement) {
  EXPECT_TRUE(is_generalized_utf8("h\xC3\xA9 \xED\xA0\x80 \xEF\xBF\xBD"));
  EXPECT_FALSE(is_generalized_utf8("bad \xC3\x28"));
  EXPECT_FALSE(is_generalized_utf8("\xFF"));
  EXPECT_EQ(replace_invalid_utf8("ok \xC3\xA9"), "ok \xC3\xA9");
  EXPECT_EQ(replace_invalid_utf8("bad \xC3\x28 \xFF"), "bad \xEF\xBF\xBD( \xEF\xBF\xBD");
}

} // namespace
} // namespace htp::ast
