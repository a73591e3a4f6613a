// Writing JSON text straight into one string, laid out byte for byte as nlohmann::json::dump(indent) and
// Python's json.dumps(indent=..., ensure_ascii=False) lay it out, without building a JSON tree first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace htp {

/// What a JSON string writer does with bytes that are not strict UTF-8 (overlong forms, surrogates,
/// truncated or stray bytes).
enum class InvalidUtf8 {
  Throw,   ///< Throw nlohmann::json::type_error 316 with the message nlohmann::json::dump() gives.
  Replace, ///< Write U+FFFD for each invalid byte, or for an encoded surrogate's three bytes.
};

/// Appends `s` as a JSON string literal, quotes included, escaped as nlohmann::json::dump() escapes it
/// (which is also json.dumps(ensure_ascii=False)): \" \\ \b \f \n \r \t, other bytes below 0x20 as
/// \u00xx (lower-case hex), everything else (UTF-8 included) as is.
void append_json_string(std::string &out, std::string_view s, InvalidUtf8 invalid = InvalidUtf8::Throw);

/// A JSON document written value by value into one string. With indent < 0 the text is compact ("," and
/// ":" without blanks); otherwise each member and element is on its own line indented by `indent` spaces
/// per level, keys are followed by ": ", and empty containers are written {} and []. The caller keeps the
/// structure valid: inside an object each value follows key().
class JsonTextWriter {
public:
  explicit JsonTextWriter(int indent = -1, InvalidUtf8 invalid = InvalidUtf8::Throw)
      : indent_(indent), invalid_(invalid) {}

  void begin_object() { open('{'); }
  void end_object() { close('}'); }
  void begin_array() { open('['); }
  void end_array() { close(']'); }
  /// The key of the next member of the current object.
  void key(std::string_view k);
  void string(std::string_view s);
  void null() { raw("null"); }
  void boolean(bool b) { raw(b ? "true" : "false"); }
  void integer(int64_t v);
  void unsigned_integer(uint64_t v);
  /// Any nlohmann JSON value (object members in their stored order), written as its dump() would be.
  template <class Json> void value(const Json &j) {
    if (j.is_object()) {
      begin_object();
      for (auto it = j.begin(); it != j.end(); ++it) {
        key(it.key());
        value(*it);
      }
      end_object();
    } else if (j.is_array()) {
      begin_array();
      for (const auto &e : j)
        value(e);
      end_array();
    } else if (j.is_string()) {
      string(j.template get_ref<const std::string &>());
    } else {
      raw(j.dump()); // null, booleans and numbers as nlohmann spells them
    }
  }
  /// A value already spelled as JSON text (e.g. a number in Python's repr), written as given.
  void raw(std::string_view json_text) {
    separate();
    out_.append(json_text);
  }

  /// The current nesting depth (0 outside every container).
  int depth() const { return level_; }
  /// The indentation width (< 0: compact).
  int indent() const { return indent_; }
  /// The text written so far; callers may reserve() it, or append a pre-rendered value after separate().
  std::string &buffer() { return out_; }
  /// Moves the text out.
  std::string take() { return std::move(out_); }

  /// What separates the next value from the previous one at this depth (",", a newline and the
  /// indentation) is written now; the caller then appends one value's text to buffer() itself.
  void separate();
  /// The text separate() writes between two values of a container at `depth` (depth() inside the
  /// current one): "," then, when indented, a newline and the indentation. Lets a caller pre-render
  /// elements of arrays it writes later.
  std::string element_separator(int depth) const;

private:
  void open(char c) {
    separate();
    out_ += c;
    ++level_;
    first_ = true;
  }
  void close(char c);
  void newline() {
    if (indent_ < 0) return;
    out_ += '\n';
    out_.append(static_cast<size_t>(level_) * static_cast<size_t>(indent_), ' ');
  }

  std::string out_;
  int indent_;
  InvalidUtf8 invalid_;
  int level_ = 0;
  bool first_ = true;     ///< No value written yet in the current container.
  bool after_key_ = false; ///< The next value is a member's value: no separator.
};

} // namespace htp
