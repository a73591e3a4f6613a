#include "json/json_text_writer.hpp"

#include <array>
#include <charconv>

#include <nlohmann/json.hpp>

namespace htp {

namespace {

/// Per byte: copied as is, escaped, or the lead of a multi-byte (or invalid) sequence.
enum ByteClass : uint8_t { kPlain, kEscape, kNonAscii };

constexpr std::array<ByteClass, 256> kByteClass = [] {
  std::array<ByteClass, 256> t{};
  for (size_t c = 0; c < 256; ++c)
    t[c] = c < 0x20 || c == '"' || c == '\\' ? kEscape : (c >= 0x80 ? kNonAscii : kPlain);
  return t;
}();

/// Length of the well-formed UTF-8 sequence at p (Unicode table 3-7: no overlong forms, no surrogates,
/// nothing above U+10FFFF), or 0.
size_t utf8_sequence(const unsigned char *p, const unsigned char *end) {
  auto in = [](unsigned char b, unsigned char lo, unsigned char hi) { return b >= lo && b <= hi; };
  const size_t left = static_cast<size_t>(end - p);
  const unsigned char b0 = p[0];
  if (in(b0, 0xC2, 0xDF)) return left >= 2 && in(p[1], 0x80, 0xBF) ? 2 : 0;
  if (in(b0, 0xE0, 0xEF)) {
    if (left < 3) return 0;
    const unsigned char lo = b0 == 0xE0 ? 0xA0 : 0x80, hi = b0 == 0xED ? 0x9F : 0xBF;
    return in(p[1], lo, hi) && in(p[2], 0x80, 0xBF) ? 3 : 0;
  }
  if (in(b0, 0xF0, 0xF4)) {
    if (left < 4) return 0;
    const unsigned char lo = b0 == 0xF0 ? 0x90 : 0x80, hi = b0 == 0xF4 ? 0x8F : 0xBF;
    return in(p[1], lo, hi) && in(p[2], 0x80, 0xBF) && in(p[3], 0x80, 0xBF) ? 4 : 0;
  }
  return 0;
}

/// Bytes an invalid sequence at p stands for under InvalidUtf8::Replace: an encoded surrogate's three,
/// otherwise one.
size_t invalid_span(const unsigned char *p, const unsigned char *end) {
  if (end - p >= 3 && p[0] == 0xED && p[1] >= 0xA0 && p[1] <= 0xBF && p[2] >= 0x80 && p[2] <= 0xBF) return 3;
  return 1;
}

[[noreturn]] void throw_invalid_utf8(std::string_view s) {
  // nlohmann's own serializer words the error (byte index and value); it throws for any text this writer
  // finds invalid, since both accept exactly the well-formed UTF-8 of Unicode table 3-7.
  (void)nlohmann::json(std::string(s)).dump();
  throw nlohmann::json::type_error::create(316, "invalid UTF-8 in a JSON string", nullptr);
}

void append_escape(std::string &out, unsigned char c) {
  switch (c) {
  case '"': out += "\\\""; return;
  case '\\': out += "\\\\"; return;
  case '\b': out += "\\b"; return;
  case '\f': out += "\\f"; return;
  case '\n': out += "\\n"; return;
  case '\r': out += "\\r"; return;
  case '\t': out += "\\t"; return;
  default: {
    static constexpr char kHex[] = "0123456789abcdef";
    const char u[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
    out.append(u, sizeof u);
  }
  }
}

} // namespace

void append_json_string(std::string &out, std::string_view s, InvalidUtf8 invalid) {
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  const auto *end = p + s.size();
  const auto *run = p; // start of the bytes not yet copied
  out.reserve(out.size() + s.size() + 2);
  out += '"';
  while (p < end) {
    const ByteClass k = kByteClass[*p];
    if (k == kPlain) {
      ++p;
      continue;
    }
    if (k == kNonAscii) {
      if (size_t n = utf8_sequence(p, end)) {
        p += n; // copied with the run
        continue;
      }
      if (invalid == InvalidUtf8::Throw) throw_invalid_utf8(s);
      out.append(reinterpret_cast<const char *>(run), static_cast<size_t>(p - run));
      out += "\xEF\xBF\xBD";
      p += invalid_span(p, end);
      run = p;
      continue;
    }
    out.append(reinterpret_cast<const char *>(run), static_cast<size_t>(p - run));
    append_escape(out, *p);
    run = ++p;
  }
  out.append(reinterpret_cast<const char *>(run), static_cast<size_t>(p - run));
  out += '"';
}

void JsonTextWriter::separate() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (level_ == 0) return;
  if (!first_) out_ += ',';
  first_ = false;
  newline();
}

std::string JsonTextWriter::element_separator(int depth) const {
  std::string sep = ",";
  if (indent_ >= 0) sep += '\n' + std::string(static_cast<size_t>(depth) * static_cast<size_t>(indent_), ' ');
  return sep;
}

void JsonTextWriter::close(char c) {
  --level_;
  if (!first_) newline();
  out_ += c;
  first_ = false;
}

void JsonTextWriter::key(std::string_view k) {
  separate();
  append_json_string(out_, k, invalid_);
  out_ += indent_ < 0 ? ":" : ": ";
  after_key_ = true;
}

void JsonTextWriter::string(std::string_view s) {
  separate();
  append_json_string(out_, s, invalid_);
}

void JsonTextWriter::integer(int64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  raw(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
}

void JsonTextWriter::unsigned_integer(uint64_t v) {
  char buf[24];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  raw(std::string_view(buf, static_cast<size_t>(r.ptr - buf)));
}

} // namespace htp
