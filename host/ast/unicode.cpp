#include "ast/unicode.hpp"

#include <algorithm>
#include <iterator>

namespace htp::ast {
namespace {
#include "unicode_printable.inc"
} // namespace

uint32_t decode_utf8(std::string_view text, size_t &pos) {
  auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  uint8_t b0 = byte(pos);
  if (b0 < 0x80) {
    ++pos;
    return b0;
  }
  size_t len = b0 >= 0xF0 && b0 <= 0xF4 ? 4 : b0 >= 0xE0 ? 3 : b0 >= 0xC2 && b0 < 0xE0 ? 2 : 0;
  if (b0 >= 0xF5) len = 0;
  if (len == 0 || pos + len > text.size()) {
    ++pos;
    return kReplacementChar;
  }
  uint32_t cp = b0 & (0x7F >> len);
  for (size_t i = 1; i < len; ++i) {
    uint8_t b = byte(pos + i);
    if ((b & 0xC0) != 0x80) {
      ++pos;
      return kReplacementChar;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  static constexpr uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_for_len[len] || cp > 0x10FFFF) {
    ++pos;
    return kReplacementChar;
  }
  pos += len;
  return cp;
}

void append_utf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::optional<uint32_t> decode_strict_utf8(std::string_view text, size_t &pos) {
  size_t at = pos;
  uint32_t cp = decode_utf8(text, pos);
  if (cp >= 0xD800 && cp <= 0xDFFF) return std::nullopt;
  if (cp == kReplacementChar && text.substr(at, 3) != "\xEF\xBF\xBD") return std::nullopt;
  return cp;
}

bool is_valid_utf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();)
    if (!decode_strict_utf8(text, pos)) return false;
  return true;
}

bool is_generalized_utf8(std::string_view text) {
  for (size_t pos = 0; pos < text.size();) {
    const size_t at = pos;
    if (decode_utf8(text, pos) == kReplacementChar && text.substr(at, 3) != "\xEF\xBF\xBD") return false;
  }
  return true;
}

std::string replace_invalid_utf8(std::string_view text) {
  if (is_valid_utf8(text)) return std::string(text);
  std::string out;
  for (size_t pos = 0; pos < text.size();) {
    auto cp = decode_strict_utf8(text, pos);
    append_utf8(out, cp ? *cp : kReplacementChar);
  }
  return out;
}

bool has_surrogates(std::string_view text) {
  for (size_t i = 0; i + 1 < text.size(); ++i)
    if (static_cast<uint8_t>(text[i]) == 0xED && static_cast<uint8_t>(text[i + 1]) >= 0xA0) return true;
  return false;
}

bool is_printable(uint32_t cp) {
  if (cp >= 0x20 && cp < 0x7F) return true;
  auto it = std::upper_bound(std::begin(kNonPrintableRanges), std::end(kNonPrintableRanges), cp,
                             [](uint32_t v, const uint32_t(&range)[2]) { return v < range[0]; });
  if (it == std::begin(kNonPrintableRanges)) return true;
  --it;
  return cp > (*it)[1];
}

} // namespace htp::ast
