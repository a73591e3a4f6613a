#include "ast/json_reader.hpp"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ast/json_dom.hpp"
#include "ast/unicode.hpp"

namespace htp::ast {
namespace {

using json_dom::PathStep;
using JValue = json_dom::Value;
using JType = json_dom::Value::Type;

constexpr uint64_t kInt64Max = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// Converts the parsed document to a Module, checking every value against the grammar. The path of the
// value being converted is kept as a stack of steps and only rendered when something is wrong.
class TreeReader {
public:
  explicit TreeReader(const JsonLimits &limits) : limits_(limits) {}

  std::optional<std::string> error;
  /// Where the program nests past the depth limit, when the node there is located: the error is then placed
  /// at it, in the program's words.
  std::optional<Span> too_deep;

  bool document(const JValue &doc, Module &out) {
    if (!doc.is_object()) return fail("expected an htp.ast.v1 document (an object), got ", doc.describe());
    const JValue *format = doc.find("format");
    if (!format) return fail("missing key 'format' (\"htp.ast.v1\")");
    if (!format->is_string() || format->string != kAstJsonFormat) {
      Scope s(this, "format");
      return fail("expected \"htp.ast.v1\", got ", Dump{*format});
    }
    for (const auto &m : doc.members) {
      if (m.key != "format" && m.key != "file" && m.key != "source" && m.key != "attrs" && m.key != "root")
        return fail("unknown key '", m.key, "' (a document has format, file, source, attrs, root)");
      Scope s(this, m.key);
      if (m.key == "file" || m.key == "source") {
        if (!m.value.is_string()) return fail("expected a string, got ", m.value.describe());
        (m.key == "file" ? out.file : out.source) = std::string(m.value.string);
      } else if (m.key == "attrs" && !attributes(m.value, out.attrs)) {
        return false;
      }
    }
    const JValue *root = doc.find("root");
    if (!root) return fail("missing key 'root'");
    file_ = out.file;
    Scope s(this, "root");
    if (!root->is_object()) return fail("expected a node, got ", root->describe());
    out.root = node(*root, 1);
    return out.root != nullptr;
  }

private:
  struct Scope {
    TreeReader *r;
    Scope(TreeReader *reader, std::string_view key) : r(reader) { r->path_.push_back({key, 0, false}); }
    Scope(TreeReader *reader, size_t index) : r(reader) { r->path_.push_back({{}, index, true}); }
    ~Scope() { r->path_.pop_back(); }
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;
  };

  // Message parts that are formatted only when something is wrong.
  struct Dump {
    const JValue &value; // written as JSON
  };
  struct FieldList {
    const KindInfo &info; // " (fields: a, b)"
  };
  static void append(std::string &out, std::string_view s) { out.append(s); }
  static void append(std::string &out, size_t n) { out += std::to_string(n); }
  static void append(std::string &out, Dump d) { out += d.value.dump(); }
  static void append(std::string &out, FieldList f) {
    if (f.info.fields.empty()) {
      out += ", which has no fields";
      return;
    }
    out += " (fields: ";
    for (size_t i = 0; i < f.info.fields.size(); ++i) {
      if (i) out += ", ";
      out += f.info.fields[i].name;
    }
    out += ")";
  }

  // Records the first error, prefixed with the current path. Kept out of line (and the message built
  // here, not by the callers) so the recursive frames that call it stay small.
  template <class... Parts> [[gnu::noinline, gnu::cold]] bool fail(const Parts &...parts) {
    if (!error) {
      std::string message = json_dom::render_path(path_) + ": ";
      (append(message, parts), ...);
      error = std::move(message);
    }
    return false;
  }

  bool attributes(const JValue &j, Attributes &out) {
    if (!j.is_object()) return fail("expected an object of attributes, got ", j.describe());
    for (const auto &m : j.members) {
      if (!is_attribute_key(m.key)) {
        Scope s(this, m.key);
        return fail("an attribute key is namespaced: <namespace>.<name>, such as wsp.axis");
      }
      out.emplace(std::string(m.key), m.value.to_json());
    }
    return true;
  }

  bool span(const JValue &j, Span &out) {
    if (!j.is_array() || j.items.size() != 4)
      return fail("expected [line, col, end_line, end_col], got ", j.describe());
    uint32_t v[4];
    for (size_t i = 0; i < 4; ++i) {
      const JValue &e = j.items[i];
      if (e.type != JType::Uint || e.uinteger > std::numeric_limits<uint32_t>::max()) {
        Scope s(this, i);
        return fail("expected a line or column number (0 to 4294967295), got ", Dump{e});
      }
      v[i] = static_cast<uint32_t>(e.uinteger);
    }
    out = Span{file_, v[0], v[1], v[2], v[3]};
    return true;
  }

  // _span or _attrs of node `n`. Out of line, like every step off the recursive path, to keep the
  // recursive frames small: trees may be thousands of nodes deep.
  [[gnu::noinline]] bool reserved_key(const json_dom::Member &m, const KindInfo &info, Node &n) {
    if (m.key != "_span" && m.key != "_attrs")
      return fail("unknown key '", m.key, "' of ", info.name, " (reserved keys are _type, _span, _attrs)");
    Scope s(this, m.key);
    if (m.key == "_attrs") return attributes(m.value, n.attrs());
    if (!info.located) return fail(info.name, " has no location, so no '_span'");
    Span sp;
    if (!span(m.value, sp)) return false;
    last_located_ = sp;
    n.set_span(std::move(sp));
    return true;
  }

  // Out of line, so that the recursive frames of node() hold no Span.
  [[gnu::noinline, gnu::cold]] void nested_too_deep(const JValue &j) {
    fail("AST nested deeper than ", limits_.max_depth, " nodes (the depth limit)");
    Span at;  // the node's place, or the nearest located one read before it (an operator has none)
    if (const JValue *sp = j.find("_span"); sp && span(*sp, at) && at.line > 0)
      too_deep = std::move(at);
    else if (last_located_.line > 0)
      too_deep = last_located_;
  }

  NodePtr node(const JValue &j, size_t depth) {
    if (depth > limits_.max_depth) {
      nested_too_deep(j);
      return nullptr;
    }
    if (++nodes_ > limits_.max_nodes) {
      fail("more than ", limits_.max_nodes, " nodes (the node-count limit)");
      return nullptr;
    }
    const JValue *type = j.find("_type");
    if (!type) {
      fail("missing key '_type' (the node type)");
      return nullptr;
    }
    if (!type->is_string()) {
      Scope s(this, "_type");
      fail("expected a node type name, got ", type->describe());
      return nullptr;
    }
    auto kind = kind_from_name(type->string);
    if (!kind) {
      Scope s(this, "_type");
      fail("unknown node type '", type->string, "'");
      return nullptr;
    }
    const KindInfo &info = kind_info(*kind);
    NodePtr n = Node::make(*kind);
    uint32_t seen = 0;
    for (const auto &m : j.members) {
      std::string_view k = m.key;
      if (!k.empty() && k[0] == '_') {
        if (k != "_type" && !reserved_key(m, info, *n)) return nullptr;
        continue;
      }
      auto index = field_index(*kind, k);
      if (!index) {
        fail("unknown field '", k, "' of ", info.name, FieldList{info});
        return nullptr;
      }
      seen |= 1u << *index;
      Scope s(this, k);
      Value v;
      if (!value(info.fields[*index], m.value, v, depth)) return nullptr;
      n->set_unchecked(*index, std::move(v));
    }
    for (size_t i = 0; i < info.fields.size(); ++i)
      if (!(seen & (1u << i))) {
        fail("missing field '", info.fields[i].name, "' of ", info.name, FieldList{info});
        return nullptr;
      }
    return n;
  }

  // A node of `field`'s category, or null where `allow_null`.
  bool child(const FieldInfo &field, const JValue &j, NodePtr &out, size_t depth, bool allow_null) {
    if (j.is_null()) return allow_null || fail("expected a node, got null");
    if (!j.is_object()) return fail("expected a node, got ", j.describe());
    out = node(j, depth + 1);
    if (!out) return false;
    if (out->info().category != field.category)
      return fail("expected a node of category ", category_name(field.category), ", got ", out->type_name(),
                  " (", category_name(out->info().category), ")");
    return true;
  }

  bool value(const FieldInfo &field, const JValue &j, Value &out, size_t depth) {
    if (j.is_null() && is_optional(field.kind)) {
      out = std::monostate{};
      return true;
    }
    if (field.kind == FieldKind::Node || field.kind == FieldKind::OptNode) {
      NodePtr n;
      if (!child(field, j, n, depth, false)) return false;
      out = std::move(n);
      return true;
    }
    if (field.kind != FieldKind::NodeList) return leaf_value(field, j, out);
    if (!j.is_array()) return fail("expected a list of nodes, got ", j.describe());
    NodeList list;
    list.reserve(j.items.size());
    for (size_t i = 0; i < j.items.size(); ++i) {
      Scope s(this, i);
      NodePtr n;
      if (!child(field, j.items[i], n, depth, true)) return false;
      list.push_back(std::move(n));
    }
    out = std::move(list);
    return true;
  }

  // A value of a field that holds no nodes.
  [[gnu::noinline]] bool leaf_value(const FieldInfo &field, const JValue &j, Value &out) {
    auto expected = [&](const char *what) { return fail("expected ", what, ", got ", j.describe()); };
    switch (field.kind) {
    case FieldKind::Ident:
    case FieldKind::OptIdent:
      if (!j.is_string())
        return expected(field.kind == FieldKind::Ident ? "an identifier" : "an identifier or null");
      out = std::string(j.string);
      return true;
    case FieldKind::String:
    case FieldKind::OptString:
      if (!j.is_string()) return expected(field.kind == FieldKind::String ? "a string" : "a string or null");
      out = std::string(j.string);
      return true;
    case FieldKind::IdentList: {
      if (!j.is_array()) return expected("a list of identifiers");
      IdentList list;
      list.reserve(j.items.size());
      for (size_t i = 0; i < j.items.size(); ++i) {
        if (!j.items[i].is_string()) {
          Scope s(this, i);
          return fail("expected an identifier, got ", j.items[i].describe());
        }
        list.emplace_back(j.items[i].string);
      }
      out = std::move(list);
      return true;
    }
    case FieldKind::Constant: {
      Constant c;
      if (!constant(j, c)) return false;
      out = std::move(c);
      return true;
    }
    case FieldKind::Int:
    case FieldKind::OptInt:
      if (j.type == JType::Int)
        out = j.integer;
      else if (j.type == JType::Uint && j.uinteger <= kInt64Max)
        out = static_cast<int64_t>(j.uinteger);
      else
        return expected(field.kind == FieldKind::Int ? "a 64-bit integer" : "a 64-bit integer or null");
      return true;
    default: break; // node kinds are handled by value()
    }
    return fail("unsupported field kind");
  }

  bool float_payload(const JValue &j, double &out) {
    switch (j.type) {
    case JType::Int: out = static_cast<double>(j.integer); return true;
    case JType::Uint: out = static_cast<double>(j.uinteger); return true;
    case JType::Float: out = j.number; return true;
    case JType::String:
      if (j.string == "inf")
        out = std::numeric_limits<double>::infinity();
      else if (j.string == "-inf")
        out = -std::numeric_limits<double>::infinity();
      else if (j.string == "nan")
        out = std::numeric_limits<double>::quiet_NaN();
      else
        return fail("expected a number, \"inf\", \"-inf\" or \"nan\", got ", Dump{j});
      return true;
    default: return fail("expected a number, \"inf\", \"-inf\" or \"nan\", got ", j.describe());
    }
  }

  bool constant(const JValue &j, Constant &out) {
    switch (j.type) {
    case JType::Null: out = NoneValue{}; return true;
    case JType::Bool: out = j.boolean; return true;
    case JType::Int: out = j.integer; return true;
    case JType::Uint:
      if (j.uinteger <= kInt64Max)
        out = static_cast<int64_t>(j.uinteger);
      else
        out = BigInt{std::to_string(j.uinteger)};
      return true;
    case JType::String: out = Str{std::string(j.string)}; return true;
    case JType::Object: break;
    default:
      return fail("expected a constant (null, true, false, an integer, a string or a tagged object such as "
                  "{\"float\": 1.5}), got ",
                  j.describe());
    }
    if (j.members.size() != 1)
      return fail(
          "expected a tagged constant with one key (int, float, complex, bytes, codepoints, ellipsis), "
          "got an object with ",
          j.members.size(), " keys");
    std::string_view tag = j.members[0].key;
    const JValue &v = j.members[0].value;
    if (tag != "int" && tag != "float" && tag != "complex" && tag != "bytes" && tag != "codepoints" &&
        tag != "ellipsis")
      return fail("unknown constant tag '", tag, "' (int, float, complex, bytes, codepoints, ellipsis)");
    Scope s(this, tag);
    if (tag == "int") {
      if (!v.is_string() || !parse_int_constant(v.string, out))
        return fail("expected a decimal integer string, got ", Dump{v});
      return true;
    }
    if (tag == "float") {
      double d;
      if (!float_payload(v, d)) return false;
      out = Float{d};
      return true;
    }
    if (tag == "complex") {
      if (!v.is_array() || v.items.size() != 2) return fail("expected [real, imag], got ", v.describe());
      double parts[2];
      for (size_t i = 0; i < 2; ++i) {
        Scope e(this, i);
        if (!float_payload(v.items[i], parts[i])) return false;
      }
      out = Complex{parts[0], parts[1]};
      return true;
    }
    if (tag == "bytes") {
      if (!v.is_string()) return fail("expected a string of characters U+0000..U+00FF, got ", v.describe());
      std::string data;
      data.reserve(v.string.size());
      for (size_t pos = 0; pos < v.string.size();) {
        uint32_t cp = decode_utf8(v.string, pos);
        if (cp > 0xFF) {
          char buf[16];
          std::snprintf(buf, sizeof buf, "U+%04X", cp);
          return fail("a bytes constant holds characters U+0000..U+00FF only, found ", buf);
        }
        data += static_cast<char>(cp);
      }
      out = Bytes{std::move(data)};
      return true;
    }
    if (tag == "codepoints") {
      if (!v.is_array()) return fail("expected a list of code points, got ", v.describe());
      std::string utf8;
      for (size_t i = 0; i < v.items.size(); ++i) {
        const JValue &cp = v.items[i];
        if (cp.type != JType::Uint || cp.uinteger > 0x10FFFF) {
          Scope e(this, i);
          return fail("expected a code point (0 to 1114111), got ", Dump{cp});
        }
        append_utf8(utf8, static_cast<uint32_t>(cp.uinteger));
      }
      out = Str{std::move(utf8)};
      return true;
    }
    if (v.type != JType::Bool || !v.boolean) return fail("expected true, got ", Dump{v});
    out = EllipsisValue{};
    return true;
  }

  const JsonLimits &limits_;
  std::vector<PathStep> path_;
  std::string file_;
  size_t nodes_ = 0;
  Span last_located_;  ///< the span read last (a deep chain's error falls back to it)
};

// Line (1-based) and column (0-based byte) of `offset` in `text`.
std::pair<uint32_t, uint32_t> line_col(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  uint32_t line = 1, col = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 0;
    } else {
      ++col;
    }
  }
  return {line, col};
}

} // namespace

Expected<Module> load_json(std::string_view text, const JsonLimits &limits, std::string_view json_name) {
  try {
    // A node is at most two JSON levels below its parent (an object in a list); constants and
    // attributes add a few more.
    json_dom::Document doc;
    if (auto syntax = json_dom::Document::parse(text, 2 * limits.max_depth + 16, doc)) {
      auto [line, col] = line_col(text, syntax->offset);
      return Diagnostic::error("ast.json", syntax->message,
                               Span{std::string(json_name), line, col, line, col});
    }
    TreeReader reader(limits);
    Module m;
    if (!reader.document(doc.root(), m)) {
      if (reader.too_deep)
        return Diagnostic::error("ast.depth",
                                 "the program nests deeper than " + std::to_string(limits.max_depth) +
                                     " levels here (HTP's limit on a program's nesting): split the expression, "
                                     "binding its parts to names",
                                 *reader.too_deep);
      return Diagnostic::error("ast.json", *reader.error, Span{std::string(json_name), 0, 0, 0, 0});
    }
    return m;
  } catch (const std::exception &e) {
    return Diagnostic::error("ast.json", std::string("$: cannot load the document: ") + e.what(),
                             Span{std::string(json_name), 0, 0, 0, 0});
  }
}

} // namespace htp::ast
