#include "ast/json_dom.hpp"

#include <cctype>
#include <charconv>
#include <cstring>
#include <unordered_set>

#include "ast/unicode.hpp"

namespace htp::ast::json_dom {

const Value *Value::find(std::string_view key) const {
  for (const auto &m : members)
    if (m.key == key) return &m.value;
  return nullptr;
}

const char *Value::describe() const {
  switch (type) {
  case Type::Null: return "null";
  case Type::Bool: return "a boolean";
  case Type::Int:
  case Type::Uint: return "an integer";
  case Type::Float: return "a float";
  case Type::String: return "a string";
  case Type::Array: return "an array";
  case Type::Object: return "an object";
  }
  return "a value";
}

nlohmann::json Value::to_json() const {
  switch (type) {
  case Type::Null: return nullptr;
  case Type::Bool: return boolean;
  case Type::Int: return integer;
  case Type::Uint: return uinteger;
  case Type::Float: return number;
  case Type::String: return std::string(string);
  case Type::Array: {
    nlohmann::json a = nlohmann::json::array();
    for (const auto &v : items)
      a.push_back(v.to_json());
    return a;
  }
  case Type::Object: {
    nlohmann::json o = nlohmann::json::object();
    for (const auto &m : members)
      o[std::string(m.key)] = m.value.to_json();
    return o;
  }
  }
  return nullptr;
}

static bool is_plain_key(std::string_view key) {
  if (key.empty() || std::isdigit(static_cast<unsigned char>(key[0]))) return false;
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::string render_path(std::span<const PathStep> steps) {
  constexpr size_t kHead = 12, kTail = 12;
  std::string out = "$";
  auto append = [&](const PathStep &s) {
    if (s.is_index)
      out += "[" + std::to_string(s.index) + "]";
    else if (is_plain_key(s.key))
      out.append(".").append(s.key);
    else
      out += "[" + nlohmann::json(std::string(s.key)).dump() + "]";
  };
  if (steps.size() <= kHead + kTail + 1) {
    for (const auto &s : steps)
      append(s);
    return out;
  }
  for (size_t i = 0; i < kHead; ++i)
    append(steps[i]);
  out += "...(" + std::to_string(steps.size() - kHead - kTail) + " more)...";
  for (size_t i = steps.size() - kTail; i < steps.size(); ++i)
    append(steps[i]);
  return out;
}

// Recursive descent over the text. Children are gathered on shared scratch stacks and copied into the
// arena when their container closes, so every array and object is one contiguous block.
class Parser {
public:
  Parser(std::string_view text, size_t max_depth, Document &doc)
      : text_(text), max_depth_(max_depth), doc_(doc) {}

  std::optional<SyntaxError> run() {
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3; // a UTF-8 byte order mark
    skip_ws();
    if (!value(doc_.root_)) return error_;
    skip_ws();
    if (pos_ != text_.size()) {
      fail("unexpected text after the end of the document");
      return error_;
    }
    return std::nullopt;
  }

private:
  bool fail(const std::string &reason) {
    if (!error_) error_ = SyntaxError{render_path(path_) + ": invalid JSON: " + reason, pos_};
    return false;
  }

  bool unexpected(const char *expected) {
    if (pos_ >= text_.size()) return fail(std::string("unexpected end of input; expected ") + expected);
    std::string got;
    unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c >= 0x20 && c < 0x7F)
      got = "'" + std::string(1, static_cast<char>(c)) + "'";
    else
      got = "byte 0x" + hex2(c);
    return fail("unexpected " + got + "; expected " + expected);
  }

  static std::string hex2(unsigned char c) {
    static const char digits[] = "0123456789abcdef";
    return {digits[c >> 4], digits[c & 15]};
  }

  void skip_ws() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c != ' ' && c != '\n' && c != '\r' && c != '\t') break;
      ++pos_;
    }
  }

  bool literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return unexpected("a value");
    pos_ += word.size();
    return true;
  }

  bool value(Value &out) {
    if (pos_ >= text_.size()) return unexpected("a value");
    switch (text_[pos_]) {
    case '{': return object(out);
    case '[': return array(out);
    case '"': out.type = Value::Type::String; return string(out.string);
    case 't':
      out.type = Value::Type::Bool;
      out.boolean = true;
      return literal("true");
    case 'f':
      out.type = Value::Type::Bool;
      out.boolean = false;
      return literal("false");
    case 'n': out.type = Value::Type::Null; return literal("null");
    default:
      if (text_[pos_] == '-' || (text_[pos_] >= '0' && text_[pos_] <= '9')) return number(out);
      return unexpected("a value");
    }
  }

  bool enter() {
    if (++depth_ > max_depth_)
      return fail("nested deeper than " + std::to_string(max_depth_) + " arrays and objects");
    return true;
  }

  bool array(Value &out) {
    if (!enter()) return false;
    ++pos_;
    size_t base = items_.size();
    path_.push_back({{}, 0, true});
    skip_ws();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
    } else {
      for (;;) {
        path_.back().index = items_.size() - base;
        skip_ws();
        Value v;
        if (!value(v)) return false; // nested containers leave `items_` as they found it
        items_.push_back(v);
        skip_ws();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < text_.size() && text_[pos_] == ']') {
          ++pos_;
          break;
        }
        return unexpected("',' or ']'");
      }
    }
    path_.pop_back();
    size_t n = items_.size() - base;
    Value *block =
        n ? static_cast<Value *>(doc_.arena_.allocate(n * sizeof(Value), alignof(Value))) : nullptr;
    for (size_t i = 0; i < n; ++i)
      new (block + i) Value(items_[base + i]);
    items_.resize(base);
    out.type = Value::Type::Array;
    out.items = std::span<const Value>(block, n);
    --depth_;
    return true;
  }

  bool object(Value &out) {
    if (!enter()) return false;
    ++pos_;
    size_t base = members_.size();
    std::unordered_set<std::string_view> seen; // used once the object has many keys
    bool keyed = false;                        // the path names this object's current key
    skip_ws();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
    } else {
      for (;;) {
        skip_ws();
        if (pos_ >= text_.size() || text_[pos_] != '"') return unexpected("a string key");
        std::string_view key;
        if (!string(key)) return false;
        if (!keyed) path_.push_back({});
        keyed = true;
        path_.back().key = key;
        if (is_duplicate(key, base, seen)) return fail("duplicate key");
        skip_ws();
        if (pos_ >= text_.size() || text_[pos_] != ':') return unexpected("':'");
        ++pos_;
        skip_ws();
        Value v;
        if (!value(v)) return false;
        members_.push_back(Member{key, v});
        skip_ws();
        if (pos_ < text_.size() && text_[pos_] == ',') {
          ++pos_;
          continue;
        }
        if (pos_ < text_.size() && text_[pos_] == '}') {
          ++pos_;
          break;
        }
        return unexpected("',' or '}'");
      }
    }
    if (keyed) path_.pop_back();
    size_t n = members_.size() - base;
    Member *block =
        n ? static_cast<Member *>(doc_.arena_.allocate(n * sizeof(Member), alignof(Member))) : nullptr;
    for (size_t i = 0; i < n; ++i)
      new (block + i) Member(members_[base + i]);
    members_.resize(base);
    out.type = Value::Type::Object;
    out.members = std::span<const Member>(block, n);
    --depth_;
    return true;
  }

  // Small objects compare keys directly; large ones (hostile input) switch to a hash set.
  bool is_duplicate(std::string_view key, size_t base, std::unordered_set<std::string_view> &seen) {
    constexpr size_t kLinear = 16;
    size_t n = members_.size() - base;
    if (n < kLinear) {
      for (size_t i = base; i < members_.size(); ++i)
        if (members_[i].key == key) return true;
      return false;
    }
    if (seen.empty())
      for (size_t i = base; i < members_.size(); ++i)
        seen.insert(members_[i].key);
    return !seen.insert(key).second;
  }

  bool hex4(uint32_t &out) {
    if (pos_ + 4 > text_.size()) {
      pos_ = text_.size();
      return unexpected("four hex digits");
    }
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_];
      uint32_t d = c >= '0' && c <= '9'   ? c - '0'
                   : c >= 'a' && c <= 'f' ? c - 'a' + 10
                   : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                          : 16;
      if (d == 16) return unexpected("a hex digit");
      out = out * 16 + d;
      ++pos_;
    }
    return true;
  }

  // A string: a view into the text when it has no escapes, else decoded into the arena.
  bool string(std::string_view &out) {
    ++pos_; // opening quote
    size_t start = pos_;
    std::string *decoded = nullptr;
    std::string buffer;
    for (;;) {
      if (pos_ >= text_.size()) return fail("unexpected end of input inside a string");
      unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') break;
      if (c < 0x20) return fail("unescaped control character 0x" + hex2(c) + " in a string");
      if (c >= 0x80) {
        size_t at = pos_;
        if (!decode_strict_utf8(text_, pos_)) {
          pos_ = at;
          return fail("invalid UTF-8 in a string");
        }
        if (decoded) decoded->append(text_.substr(at, pos_ - at));
        continue;
      }
      if (c != '\\') {
        if (decoded) *decoded += static_cast<char>(c);
        ++pos_;
        continue;
      }
      if (!decoded) {
        buffer.assign(text_.substr(start, pos_ - start));
        decoded = &buffer;
      }
      ++pos_;
      if (pos_ >= text_.size()) return fail("unexpected end of input inside a string");
      char e = text_[pos_++];
      switch (e) {
      case '"': *decoded += '"'; break;
      case '\\': *decoded += '\\'; break;
      case '/': *decoded += '/'; break;
      case 'b': *decoded += '\b'; break;
      case 'f': *decoded += '\f'; break;
      case 'n': *decoded += '\n'; break;
      case 'r': *decoded += '\r'; break;
      case 't': *decoded += '\t'; break;
      case 'u': {
        uint32_t cp;
        if (!hex4(cp)) return false;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
          uint32_t low = 0;
          if (text_.substr(pos_, 2) != "\\u" || (pos_ += 2, !hex4(low)) || low < 0xDC00 || low > 0xDFFF)
            return fail("lone surrogate in a \\u escape (a str constant holding one is written "
                        "{\"codepoints\": [...]})");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return fail("lone surrogate in a \\u escape (a str constant holding one is written "
                      "{\"codepoints\": [...]})");
        }
        append_utf8(*decoded, cp);
        break;
      }
      default: --pos_; return fail("invalid escape '\\" + std::string(1, e) + "' in a string");
      }
    }
    if (decoded) {
      char *mem = static_cast<char *>(doc_.arena_.allocate(decoded->size() ? decoded->size() : 1, 1));
      std::memcpy(mem, decoded->data(), decoded->size());
      out = std::string_view(mem, decoded->size());
    } else {
      out = text_.substr(start, pos_ - start);
    }
    ++pos_; // closing quote
    return true;
  }

  bool number(Value &out) {
    size_t start = pos_;
    auto digits = [&] {
      size_t from = pos_;
      while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9')
        ++pos_;
      return pos_ - from;
    };
    bool negative = text_[pos_] == '-';
    if (negative) ++pos_;
    if (pos_ < text_.size() && text_[pos_] == '0') {
      ++pos_;
    } else if (digits() == 0) {
      return unexpected("a digit");
    }
    bool integral = true;
    if (pos_ < text_.size() && text_[pos_] == '.') {
      integral = false;
      ++pos_;
      if (digits() == 0) return unexpected("a digit after '.'");
    }
    if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      integral = false;
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      if (digits() == 0) return unexpected("a digit in the exponent");
    }
    const char *first = text_.data() + start;
    const char *last = text_.data() + pos_;
    if (integral) {
      if (negative) {
        auto [end, ec] = std::from_chars(first, last, out.integer);
        if (ec == std::errc() && end == last) {
          out.type = Value::Type::Int;
          return true;
        }
      } else {
        auto [end, ec] = std::from_chars(first, last, out.uinteger);
        if (ec == std::errc() && end == last) {
          out.type = Value::Type::Uint;
          return true;
        }
      }
    }
    auto [end, ec] = std::from_chars(first, last, out.number);
    if (ec != std::errc() || end != last) {
      pos_ = start;
      return fail("number " + std::string(first, last) + " is outside the range of a double");
    }
    out.type = Value::Type::Float;
    return true;
  }

  std::string_view text_;
  size_t max_depth_;
  Document &doc_;
  size_t pos_ = 0;
  size_t depth_ = 0;
  std::vector<Value> items_;
  std::vector<Member> members_;
  std::vector<PathStep> path_;
  std::optional<SyntaxError> error_;
};

std::optional<SyntaxError> Document::parse(std::string_view text, size_t max_depth, Document &out) {
  return Parser(text, max_depth, out).run();
}

} // namespace htp::ast::json_dom
