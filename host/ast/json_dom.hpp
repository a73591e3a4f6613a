// A read-only JSON tree parsed into one arena: the fast first stage of loading an htp.ast.v1 document.
// Strict RFC 8259 JSON in UTF-8; a syntax error names the JSON path where parsing stopped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory_resource>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace htp::ast::json_dom {

struct Member;

/// One JSON value. Strings, arrays and objects point into the Document's arena or into the parsed text.
struct Value {
  enum class Type : uint8_t { Null, Bool, Int, Uint, Float, String, Array, Object };
  Type type = Type::Null;
  bool boolean = false;
  int64_t integer = 0;   ///< Type::Int: a negative integer.
  uint64_t uinteger = 0; ///< Type::Uint: a non-negative integer.
  double number = 0;     ///< Type::Float, and integers too large for 64 bits.
  std::string_view string;
  std::span<const Value> items;
  std::span<const Member> members; ///< In document order; keys are unique.

  /// Type tests.
  bool is_null() const { return type == Type::Null; }
  bool is_string() const { return type == Type::String; }
  bool is_array() const { return type == Type::Array; }
  bool is_object() const { return type == Type::Object; }
  /// The member `key` of an object, or nullptr.
  const Value *find(std::string_view key) const;
  /// "null", "a boolean", "an integer", "a float", "a string", "an array", "an object".
  const char *describe() const;
  /// A copy as nlohmann::json (for metadata attributes).
  nlohmann::json to_json() const;
  /// The value as compact JSON text, for messages.
  std::string dump() const { return to_json().dump(); }
};

struct Member {
  std::string_view key;
  Value value;
};

/// One step of a JSON path: an object key or an array index.
struct PathStep {
  std::string_view key;
  size_t index = 0;
  bool is_index = false;
};

/// `$.root.body[2].value`; a very deep path keeps its first and last steps.
std::string render_path(std::span<const PathStep> steps);

/// Where and why parsing failed.
struct SyntaxError {
  std::string message; ///< "<path>: invalid JSON: <reason>"
  size_t offset = 0;   ///< Byte offset in the text.
};

/// A parsed document. `text` must outlive it: unescaped strings are views into the text.
class Document {
public:
  /// Parses `text`; nesting deeper than `max_depth` arrays/objects is an error.
  static std::optional<SyntaxError> parse(std::string_view text, size_t max_depth, Document &out);

  /// The top-level value.
  const Value &root() const { return root_; }

private:
  friend class Parser;
  std::pmr::monotonic_buffer_resource arena_;
  Value root_;
};

} // namespace htp::ast::json_dom
