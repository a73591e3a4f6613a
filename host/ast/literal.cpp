#include "ast/literal.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "ast/unicode.hpp"

namespace htp::ast {
namespace {

void append_hex(std::string &out, const char *prefix, uint32_t value, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%s%0*x", prefix, digits, value);
  out += buf;
}

// Python's format_float_short in 'r' mode: shortest round-trip digits, exponent form when the
// decimal point falls outside (-4, 16]; `add_dot_0` gives integral values a ".0" (float, not complex).
std::string format_r(double value, bool add_dot_0, bool always_sign) {
  std::string out;
  if (std::isnan(value)) return always_sign ? "+nan" : "nan";
  if (std::signbit(value))
    out += '-';
  else if (always_sign)
    out += '+';
  if (std::isinf(value)) return out + "inf";

  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, std::fabs(value), std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(end - buf));
  size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e))
    if (c != '.') digits += c;
  int exp10 = 0;
  std::string_view exp_text = sci.substr(e + 1);
  if (exp_text[0] == '+') exp_text.remove_prefix(1);
  std::from_chars(exp_text.data(), exp_text.data() + exp_text.size(), exp10);
  int decpt = exp10 + 1;
  int ndigits = static_cast<int>(digits.size());

  if (decpt <= -4 || decpt > 16) {
    out += digits[0];
    if (ndigits > 1) {
      out += '.';
      out.append(digits, 1);
    }
    char eb[16];
    std::snprintf(eb, sizeof eb, "e%+.02d", decpt - 1);
    return out + eb;
  }
  if (decpt <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-decpt), '0');
    return out + digits;
  }
  if (decpt < ndigits) {
    out.append(digits, 0, static_cast<size_t>(decpt));
    out += '.';
    out.append(digits, static_cast<size_t>(decpt));
    return out;
  }
  out += digits;
  out.append(static_cast<size_t>(decpt - ndigits), '0');
  if (add_dot_0) out += ".0";
  return out;
}

char choose_quote(std::string_view text) {
  bool single = text.find('\'') != std::string_view::npos;
  bool dbl = text.find('"') != std::string_view::npos;
  return single && !dbl ? '"' : '\'';
}

} // namespace

std::string float_repr(double value) {
  return format_r(value, true, false);
}

std::string complex_repr(double real, double imag) {
  if (real == 0 && !std::signbit(real)) return format_r(imag, false, false) + "j";
  return "(" + format_r(real, false, false) + format_r(imag, false, true) + "j)";
}

void append_unicode_escape(std::string &out, uint32_t cp) {
  switch (cp) {
  case '\\': out += "\\\\"; return;
  case '\t': out += "\\t"; return;
  case '\n': out += "\\n"; return;
  case '\r': out += "\\r"; return;
  default: break;
  }
  if (cp >= 0x20 && cp < 0x7F)
    out += static_cast<char>(cp);
  else if (cp < 0x100)
    append_hex(out, "\\x", cp, 2);
  else if (cp < 0x10000)
    append_hex(out, "\\u", cp, 4);
  else
    append_hex(out, "\\U", cp, 8);
}

std::string str_repr(std::string_view utf8) {
  char quote = choose_quote(utf8);
  std::string out(1, quote);
  for (size_t pos = 0; pos < utf8.size();) {
    uint32_t cp = decode_utf8(utf8, pos);
    if (cp == static_cast<uint32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\t' || cp == '\n' || cp == '\r' || cp < 0x20 || cp == 0x7F) {
      append_unicode_escape(out, cp);
    } else if (cp < 0x7F || is_printable(cp)) {
      append_utf8(out, cp);
    } else {
      append_unicode_escape(out, cp);
    }
  }
  out += quote;
  return out;
}

std::string bytes_repr(std::string_view data) {
  char quote = choose_quote(data);
  std::string out = "b";
  out += quote;
  for (unsigned char b : data) {
    if (b == static_cast<unsigned char>(quote) || b == '\\') {
      out += '\\';
      out += static_cast<char>(b);
    } else if (b == '\t') {
      out += "\\t";
    } else if (b == '\n') {
      out += "\\n";
    } else if (b == '\r') {
      out += "\\r";
    } else if (b < 0x20 || b >= 0x7F) {
      append_hex(out, "\\x", b, 2);
    } else {
      out += static_cast<char>(b);
    }
  }
  out += quote;
  return out;
}

} // namespace htp::ast
