// htp/ir_document.hpp — what the typed readers of the shared module attributes have in common
// (docs/ir-contracts.md): source spans as the documents carry them, the located error a reader throws,
// the version rule, and a small path-tracking reader over any nlohmann basic_json (json or ordered_json).
// The documents themselves are in htp/tile_kernels.hpp (and their siblings).
#pragma once

#include <htp/ast.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace htp {

/// A source span as the IR documents carry it: 1-based lines, 0-based columns. `file` is absent in
/// documents whose spans all lie in the module's own file (a reader then takes the module's file).
struct IrSpan {
  std::optional<std::string> file;
  uint32_t line = 0, col = 0, end_line = 0, end_col = 0;

  /// The span for a diagnostic; `module_file` stands in for an absent file.
  SourceSpan source_span(const std::string &module_file = {}) const {
    return SourceSpan{file.value_or(module_file), line, col, end_line, end_col};
  }
  friend bool operator==(const IrSpan &, const IrSpan &) = default;
};

/// {"file"?, "line", "col", "end_line", "end_col"} in that order.
template <class J> void to_json(J &j, const IrSpan &s) {
  j = J::object();
  if (s.file) j["file"] = *s.file;
  j["line"] = s.line;
  j["col"] = s.col;
  j["end_line"] = s.end_line;
  j["end_col"] = s.end_col;
}

/// A tensor dimension of a workload or program parameter: a static size, or a symbol bound at run time
/// from the argument's shape ("B").
struct IrDim {
  int64_t size = 0;    ///< static: >= 1
  std::string symbol;  ///< symbolic: the name (size 0)

  bool is_symbol() const { return !symbol.empty(); }
  friend bool operator==(const IrDim &, const IrDim &) = default;
};

/// A static size as a JSON integer, a symbol as a JSON string.
template <class J> void to_json(J &j, const IrDim &d) { j = d.is_symbol() ? J(d.symbol) : J(d.size); }

/// A module attribute that does not hold a valid document of its schema: which attribute, the JSON
/// pointer of the offending value ("/kernels/0/params/1/type/kind"; empty for the document itself), the
/// reason, and the span of the innermost kernel or statement around it when the document states one.
/// It is a PassError, so a pass that lets it escape fails with its message.
class IrDocumentError : public PassError {
public:
  enum class Kind {
    Malformed, ///< a key is missing or a value has the wrong type or range
    Version,   ///< the document is of another major version (or names no version)
  };

  IrDocumentError(Kind kind, std::string attribute, std::string path, std::string reason,
                  std::optional<IrSpan> span = std::nullopt)
      : PassError(render(kind, attribute, path, reason)), kind_(kind), attribute_(std::move(attribute)),
        path_(std::move(path)), reason_(std::move(reason)), span_(std::move(span)) {}

  Kind kind() const { return kind_; }
  const std::string &attribute() const { return attribute_; }
  const std::string &path() const { return path_; }
  const std::string &reason() const { return reason_; }
  const std::optional<IrSpan> &span() const { return span_; }

private:
  static std::string render(Kind kind, const std::string &attribute, const std::string &path,
                            const std::string &reason) {
    if (kind == Kind::Version) return attribute + " " + reason;
    return "malformed " + attribute + (path.empty() ? std::string() : " at " + path) + ": " + reason;
  }

  Kind kind_;
  std::string attribute_, path_, reason_;
  std::optional<IrSpan> span_;
};

/// Whether the "schema" value `found` is of the major version `expected` (e.g. "htp.tile.kernels.v1"):
/// the same text, or it followed by a minor revision ".<digits>". Readers reject other majors.
inline bool schema_major_matches(std::string_view found, std::string_view expected) {
  if (found.substr(0, expected.size()) != expected) return false;
  std::string_view rest = found.substr(expected.size());
  if (rest.empty()) return true;
  if (rest.size() < 2 || rest[0] != '.') return false;
  for (char c : rest.substr(1))
    if (c < '0' || c > '9') return false;
  return true;
}

namespace ir_reader {

/// A short description of a JSON value for messages: scalars as JSON text, containers by kind.
template <class J> std::string describe(const J &v) {
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  std::string text = v.dump();
  return text.size() > 48 ? text.substr(0, 45) + "..." : text;
}

/// Reads one document, tracking the innermost span for errors. Every accessor takes the JSON pointer of
/// the value it reads and throws IrDocumentError naming it.
template <class J> class Reader {
public:
  explicit Reader(std::string attribute) : attribute_(std::move(attribute)) {}

  [[noreturn]] void fail(const std::string &path, const std::string &reason) const {
    throw IrDocumentError(IrDocumentError::Kind::Malformed, attribute_, path, reason, span_);
  }
  [[noreturn]] void fail_version(const std::string &reason) const {
    throw IrDocumentError(IrDocumentError::Kind::Version, attribute_, "/schema", reason, std::nullopt);
  }

  /// The span errors point at (set while reading a kernel or statement that has one).
  const std::optional<IrSpan> &span() const { return span_; }
  void set_span(std::optional<IrSpan> s) { span_ = std::move(s); }

  static std::string at(const std::string &path, std::string_view key) { return path + "/" + std::string(key); }
  static std::string at(const std::string &path, size_t index) { return path + "/" + std::to_string(index); }

  const J &object(const J &v, const std::string &path) const {
    if (!v.is_object()) fail(path, "expected an object, found " + describe(v));
    return v;
  }
  const J &array(const J &v, const std::string &path) const {
    if (!v.is_array()) fail(path, "expected an array, found " + describe(v));
    return v;
  }
  /// Member `key` of the object `obj` (at `path`); a missing key is an error at path/key.
  const J &need(const J &obj, std::string_view key, const std::string &path) const {
    auto it = obj.find(std::string(key));
    if (it == obj.end()) fail(at(path, key), "required key is missing");
    return *it;
  }
  /// The array member `key` of the object `obj` (at `path`), each element read by item(element, its path).
  template <class F>
  auto list(const J &obj, std::string_view key, const std::string &path, F &&item) const
      -> std::vector<decltype(item(obj, path))> {
    const std::string p = at(path, key);
    const J &a = array(need(obj, key, path), p);
    std::vector<decltype(item(obj, path))> out;
    out.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i) out.push_back(item(a[i], at(p, i)));
    return out;
  }
  /// Opens a document: an object whose "schema" is of major version `expected`; the "schema" value.
  std::string document(const J &doc, std::string_view expected) const {
    object(doc, "");
    version(doc, expected);
    return need(doc, "schema", "").template get<std::string>();
  }
  /// Member `key`, or null when absent.
  const J *find(const J &obj, std::string_view key) const {
    auto it = obj.find(std::string(key));
    return it == obj.end() ? nullptr : &*it;
  }
  std::string string(const J &v, const std::string &path) const {
    if (!v.is_string()) fail(path, "expected a string, found " + describe(v));
    return v.template get<std::string>();
  }
  /// A non-empty string naming something.
  std::string name(const J &v, const std::string &path) const {
    std::string s = string(v, path);
    if (s.empty()) fail(path, "expected a non-empty name");
    return s;
  }
  bool boolean(const J &v, const std::string &path) const {
    if (!v.is_boolean()) fail(path, "expected true or false, found " + describe(v));
    return v.template get<bool>();
  }
  int64_t integer(const J &v, const std::string &path, int64_t min = INT64_MIN) const {
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.template get<uint64_t>() > uint64_t(INT64_MAX)))
      fail(path, "expected an integer, found " + describe(v));
    int64_t i = v.template get<int64_t>();
    if (i < min) fail(path, "expected an integer >= " + std::to_string(min) + ", found " + std::to_string(i));
    return i;
  }
  uint32_t position(const J &v, const std::string &path) const {
    int64_t i = integer(v, path, 0);
    if (i > int64_t(UINT32_MAX)) fail(path, "a line or column beyond 2**32");
    return static_cast<uint32_t>(i);
  }
  /// A list of `min_size` or more positive integers (a static shape).
  std::vector<int64_t> shape(const J &v, const std::string &path, size_t min_size = 1) const {
    array(v, path);
    if (v.size() < min_size)
      fail(path, "expected at least " + std::to_string(min_size) + " dimension" + (min_size == 1 ? "" : "s"));
    std::vector<int64_t> out;
    for (size_t i = 0; i < v.size(); ++i) out.push_back(integer(v[i], at(path, i), 1));
    return out;
  }
  /// A name of the IR: letters, digits and '_', not starting with a digit.
  std::string identifier(const J &v, const std::string &path) const {
    std::string s = name(v, path);
    auto letter = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; };
    bool ok = letter(s[0]);
    for (char c : s) ok = ok && (letter(c) || (c >= '0' && c <= '9'));
    if (!ok) fail(path, "expected an identifier, found \"" + s + "\"");
    return s;
  }
  /// A list of `min_size` or more identifiers.
  std::vector<std::string> identifiers(const J &v, const std::string &path, size_t min_size = 0) const {
    array(v, path);
    if (v.size() < min_size) fail(path, "expected at least " + std::to_string(min_size) + " entry");
    std::vector<std::string> out;
    for (size_t i = 0; i < v.size(); ++i) out.push_back(identifier(v[i], at(path, i)));
    return out;
  }
  /// A tensor shape of workload or program parameters: one or more dims, each a positive integer or a
  /// symbol (an identifier).
  std::vector<IrDim> dims(const J &v, const std::string &path) const {
    array(v, path);
    if (v.empty()) fail(path, "expected at least 1 dimension");
    std::vector<IrDim> out;
    for (size_t i = 0; i < v.size(); ++i) {
      IrDim d;
      if (v[i].is_string()) d.symbol = identifier(v[i], at(path, i));
      else d.size = integer(v[i], at(path, i), 1);
      out.push_back(std::move(d));
    }
    return out;
  }
  /// One of `allowed` (a string).
  std::string one_of(const J &v, const std::string &path, std::initializer_list<std::string_view> allowed) const {
    std::string s = string(v, path);
    std::string list;
    for (std::string_view a : allowed) {
      if (s == a) return s;
      list += (list.empty() ? "" : ", ") + std::string(a);
    }
    fail(path, "expected one of " + list + ", found \"" + s + "\"");
  }
  std::string dtype(const J &v, const std::string &path) const {
    return one_of(v, path, {"f16", "bf16", "f32", "i8", "i16", "i32", "i64", "u8"});
  }
  IrSpan span(const J &v, const std::string &path) const {
    object(v, path);
    IrSpan s;
    if (const J *f = find(v, "file")) s.file = string(*f, at(path, "file"));
    s.line = position(need(v, "line", path), at(path, "line"));
    s.col = position(need(v, "col", path), at(path, "col"));
    s.end_line = position(need(v, "end_line", path), at(path, "end_line"));
    s.end_col = position(need(v, "end_col", path), at(path, "end_col"));
    return s;
  }
  /// A scalar expression (docs/ir-contracts.md §2): a number or bool literal, {"var"}, {"param"},
  /// {"read", "index": [Expr]} or {"op", "args": [Expr]}. Returned as nlohmann::json.
  nlohmann::json expr(const J &v, const std::string &path) const {
    check_expr(v, path);
    return nlohmann::json(v);
  }
  void check_expr(const J &v, const std::string &path) const {
    if (v.is_number() || v.is_boolean()) return;
    if (!v.is_object())
      fail(path, "expected an expression (a number, true/false, or an object with var, param, read or op), found " +
                     describe(v));
    if (const J *x = find(v, "var")) return (void)name(*x, at(path, "var"));
    if (const J *x = find(v, "param")) return (void)name(*x, at(path, "param"));
    if (const J *x = find(v, "read")) {
      name(*x, at(path, "read"));
      const std::string ip = at(path, "index");
      const J &index = array(need(v, "index", path), ip);
      for (size_t i = 0; i < index.size(); ++i) check_expr(index[i], at(ip, i));
      return;
    }
    if (const J *x = find(v, "op")) {
      name(*x, at(path, "op"));
      const std::string ap = at(path, "args");
      const J &args = array(need(v, "args", path), ap);
      for (size_t i = 0; i < args.size(); ++i) check_expr(args[i], at(ap, i));
      return;
    }
    fail(path, "expected an expression object with one of the keys var, param, read, op");
  }
  /// The document's "schema" names major version `expected`; otherwise a Version error.
  void version(const J &doc, std::string_view expected) const {
    const J *s = find(doc, "schema");
    if (!s) fail("/schema", "required key is missing (expected \"" + std::string(expected) + "\")");
    if (!s->is_string() || !schema_major_matches(s->template get<std::string>(), expected))
      fail_version("has schema " + describe(*s) + "; this reader reads " + std::string(expected) +
                   " and its minor revisions (" + std::string(expected) + ".N)");
  }

private:
  std::string attribute_;
  std::optional<IrSpan> span_;
};

} // namespace ir_reader

} // namespace htp
