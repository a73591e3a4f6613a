#include "ast/json_reader.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ast/unicode.hpp"

namespace htp::ast {
namespace {

using json = nlohmann::json;

// One step of a JSON path: an object key or an array index.
struct PathStep {
  std::string_view key;
  size_t index = 0;
  bool is_index = false;
};

bool is_plain_key(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

// `$.root.body[2].value`; very deep paths keep their first and last steps.
std::string render_path(const std::vector<PathStep> &steps) {
  constexpr size_t kHead = 12, kTail = 12;
  std::string out = "$";
  auto append = [&](const PathStep &s) {
    if (s.is_index) {
      out += "[" + std::to_string(s.index) + "]";
    } else if (is_plain_key(s.key)) {
      out += ".";
      out += s.key;
    } else {
      out += "[" + json(std::string(s.key)).dump() + "]";
    }
  };
  if (steps.size() <= kHead + kTail + 1) {
    for (const auto &s : steps)
      append(s);
    return out;
  }
  for (size_t i = 0; i < kHead; ++i)
    append(steps[i]);
  out += "…(" + std::to_string(steps.size() - kHead - kTail) + " more)…";
  for (size_t i = steps.size() - kTail; i < steps.size(); ++i)
    append(steps[i]);
  return out;
}

const char *describe(const json &j) {
  switch (j.type()) {
  case json::value_t::null: return "null";
  case json::value_t::boolean: return "a boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned: return "an integer";
  case json::value_t::number_float: return "a float";
  case json::value_t::string: return "a string";
  case json::value_t::array: return "an array";
  case json::value_t::object: return "an object";
  default: return "a binary value";
  }
}

// Builds the document from SAX events, tracking the path so a syntax error can say where it happened,
// and rejecting duplicate keys and excessive nesting before they cost anything.
class DomBuilder {
public:
  DomBuilder(size_t max_json_depth) : max_json_depth_(max_json_depth) {}

  json root;
  std::optional<std::string> error;
  std::optional<size_t> error_offset;

  bool null() { return scalar(json(nullptr)); }
  bool boolean(bool v) { return scalar(json(v)); }
  bool number_integer(json::number_integer_t v) { return scalar(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return scalar(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t &) { return scalar(json(v)); }
  bool string(json::string_t &v) { return scalar(json(std::move(v))); }
  bool binary(json::binary_t &v) { return scalar(json(std::move(v))); }

  bool start_object(std::size_t) { return open(json::object()); }
  bool end_object() { return close(); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_array() { return close(); }

  bool key(json::string_t &k) {
    Frame &f = stack_.back();
    if (f.container->contains(k)) {
      f.key = std::move(k);
      fail("duplicate key");
      return false;
    }
    f.key = std::move(k);
    f.has_key = true;
    return true;
  }

  bool parse_error(std::size_t position, const std::string &, const json::exception &ex) {
    std::string what = ex.what();
    if (auto close = what.find("] "); what.rfind("[json.exception", 0) == 0 && close != std::string::npos)
      what = what.substr(close + 2);
    fail("invalid JSON: " + what);
    error_offset = position;
    return false;
  }

private:
  struct Frame {
    json *container;
    std::string key;
    bool has_key = false;
    size_t index = 0;
  };

  std::vector<PathStep> path() const {
    std::vector<PathStep> steps;
    for (const auto &f : stack_) {
      if (f.container->is_array())
        steps.push_back({{}, f.index, true});
      else if (f.has_key)
        steps.push_back({f.key, 0, false});
    }
    return steps;
  }

  void fail(const std::string &message) { error = render_path(path()) + ": " + message; }

  json *place(json value) {
    if (stack_.empty()) {
      root = std::move(value);
      return &root;
    }
    Frame &f = stack_.back();
    if (f.container->is_array()) {
      f.container->push_back(std::move(value));
      return &f.container->back();
    }
    json &slot = (*f.container)[f.key];
    slot = std::move(value);
    return &slot;
  }

  // A value in the innermost container is complete.
  void advance() {
    if (stack_.empty()) return;
    Frame &f = stack_.back();
    if (f.container->is_array())
      ++f.index;
    else
      f.has_key = false;
  }

  bool scalar(json value) {
    place(std::move(value));
    advance();
    return true;
  }

  bool open(json value) {
    if (stack_.size() >= max_json_depth_) {
      fail("JSON nested deeper than " + std::to_string(max_json_depth_) + " levels");
      return false;
    }
    stack_.push_back(Frame{place(std::move(value)), {}, false, 0});
    return true;
  }

  bool close() {
    stack_.pop_back();
    advance();
    return true;
  }

  size_t max_json_depth_;
  std::vector<Frame> stack_;
};

// Converts the document to a Module, checking every value against the grammar.
class TreeReader {
public:
  TreeReader(const JsonLimits &limits) : limits_(limits) {}

  std::optional<std::string> error;

  bool document(const json &doc, Module &out) {
    if (!doc.is_object())
      return fail("expected an htp.ast.v1 document (an object), got " + std::string(describe(doc)));
    auto format = doc.find("format");
    if (format == doc.end()) return fail("missing key 'format' (\"htp.ast.v1\")");
    if (!format->is_string() || format->get_ref<const std::string &>() != kAstJsonFormat) {
      Scope s(this, "format");
      return fail("expected \"htp.ast.v1\", got " + format->dump());
    }
    for (auto it = doc.begin(); it != doc.end(); ++it) {
      const std::string &k = it.key();
      if (k != "format" && k != "file" && k != "source" && k != "attrs" && k != "root")
        return fail("unknown key '" + k + "' (a document has format, file, source, attrs, root)");
      Scope s(this, k);
      if (k == "file") {
        if (!it->is_string()) return fail("expected a string, got " + std::string(describe(*it)));
        out.file = it->get<std::string>();
      } else if (k == "source") {
        if (!it->is_string()) return fail("expected a string, got " + std::string(describe(*it)));
        out.source = it->get<std::string>();
      } else if (k == "attrs") {
        if (!attributes(*it, out.attrs)) return false;
      }
    }
    auto root = doc.find("root");
    if (root == doc.end()) return fail("missing key 'root'");
    file_ = out.file;
    Scope s(this, "root");
    if (!root->is_object()) return fail("expected a node, got " + std::string(describe(*root)));
    out.root = node(*root, 1);
    return out.root != nullptr;
  }

private:
  struct Scope {
    TreeReader *r;
    Scope(TreeReader *reader, std::string_view key) : r(reader) { r->path_.push_back({key, 0, false}); }
    Scope(TreeReader *reader, size_t index) : r(reader) { r->path_.push_back({{}, index, true}); }
    ~Scope() { r->path_.pop_back(); }
  };

  bool fail(const std::string &message) {
    if (!error) error = render_path(path_) + ": " + message;
    return false;
  }

  bool attributes(const json &j, Attributes &out) {
    if (!j.is_object()) return fail("expected an object of attributes, got " + std::string(describe(j)));
    for (auto it = j.begin(); it != j.end(); ++it)
      out.emplace(it.key(), *it);
    return true;
  }

  bool span(const json &j, Span &out) {
    uint32_t v[4];
    if (!j.is_array() || j.size() != 4)
      return fail("expected [line, col, end_line, end_col], got " + std::string(describe(j)));
    for (size_t i = 0; i < 4; ++i) {
      const json &e = j[i];
      bool in_range = e.is_number_unsigned() ? e.get<uint64_t>() <= std::numeric_limits<uint32_t>::max()
                                             : e.is_number_integer() && e.get<int64_t>() >= 0;
      if (!in_range) {
        Scope s(this, i);
        return fail("expected a line or column number (0 to 4294967295), got " + e.dump());
      }
      v[i] = static_cast<uint32_t>(e.get<uint64_t>());
    }
    out = Span{file_, v[0], v[1], v[2], v[3]};
    return true;
  }

  NodePtr node(const json &j, size_t depth) {
    if (depth > limits_.max_depth) {
      fail("AST nested deeper than " + std::to_string(limits_.max_depth) + " nodes (the depth limit)");
      return nullptr;
    }
    if (++nodes_ > limits_.max_nodes) {
      fail("more than " + std::to_string(limits_.max_nodes) + " nodes (the node-count limit)");
      return nullptr;
    }
    auto type = j.find("_type");
    if (type == j.end()) {
      fail("missing key '_type' (the node type)");
      return nullptr;
    }
    if (!type->is_string()) {
      Scope s(this, "_type");
      fail("expected a node type name, got " + std::string(describe(*type)));
      return nullptr;
    }
    const std::string &type_name = type->get_ref<const std::string &>();
    auto kind = kind_from_name(type_name);
    if (!kind) {
      Scope s(this, "_type");
      fail("unknown node type '" + type_name + "'");
      return nullptr;
    }
    const KindInfo &info = kind_info(*kind);
    NodePtr n = Node::make(*kind);
    uint32_t seen = 0;
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string &k = it.key();
      if (!k.empty() && k[0] == '_') {
        if (k == "_type") continue;
        if (k != "_span" && k != "_attrs") {
          fail("unknown key '" + k + "' of " + type_name + " (reserved keys are _type, _span, _attrs)");
          return nullptr;
        }
        Scope s(this, k);
        if (k == "_span") {
          if (!info.located) {
            fail(type_name + " has no location, so no '_span'");
            return nullptr;
          }
          Span sp;
          if (!span(*it, sp)) return nullptr;
          n->set_span(std::move(sp));
        } else if (!attributes(*it, n->attrs())) {
          return nullptr;
        }
        continue;
      }
      auto index = field_index(*kind, k);
      if (!index) {
        fail("unknown field '" + k + "' of " + type_name + field_list(info));
        return nullptr;
      }
      seen |= 1u << *index;
      Scope s(this, k);
      Value v;
      if (!value(info.fields[*index], *it, v, depth)) return nullptr;
      n->set_unchecked(*index, std::move(v));
    }
    for (size_t i = 0; i < info.fields.size(); ++i)
      if (!(seen & (1u << i))) {
        fail("missing field '" + std::string(info.fields[i].name) + "' of " + type_name + field_list(info));
        return nullptr;
      }
    return n;
  }

  static std::string field_list(const KindInfo &info) {
    if (info.fields.empty()) return ", which has no fields";
    std::string s = " (fields: ";
    for (size_t i = 0; i < info.fields.size(); ++i) {
      if (i) s += ", ";
      s += info.fields[i].name;
    }
    return s + ")";
  }

  // A node of `field`'s category; null when allowed.
  bool child(const FieldInfo &field, const json &j, NodePtr &out, size_t depth, bool allow_null) {
    if (j.is_null()) {
      if (allow_null) return true;
      return fail("expected a node, got null");
    }
    if (!j.is_object()) return fail("expected a node, got " + std::string(describe(j)));
    out = node(j, depth + 1);
    if (!out) return false;
    if (out->info().category != field.category)
      return fail("expected a node of category " + std::string(category_name(field.category)) + ", got " +
                  std::string(out->type_name()) + " (" + std::string(category_name(out->info().category)) +
                  ")");
    return true;
  }

  bool value(const FieldInfo &field, const json &j, Value &out, size_t depth) {
    auto expected = [&](const char *what) {
      return fail(std::string("expected ") + what + ", got " + describe(j));
    };
    if (j.is_null() && (is_optional(field.kind))) {
      out = std::monostate{};
      return true;
    }
    switch (field.kind) {
    case FieldKind::Node:
    case FieldKind::OptNode: {
      NodePtr n;
      if (!child(field, j, n, depth, false)) return false;
      out = std::move(n);
      return true;
    }
    case FieldKind::NodeList: {
      if (!j.is_array()) return expected("a list of nodes");
      NodeList list;
      list.reserve(j.size());
      for (size_t i = 0; i < j.size(); ++i) {
        Scope s(this, i);
        NodePtr n;
        if (!child(field, j[i], n, depth, true)) return false;
        list.push_back(std::move(n));
      }
      out = std::move(list);
      return true;
    }
    case FieldKind::Ident:
    case FieldKind::OptIdent:
      if (!j.is_string())
        return expected(field.kind == FieldKind::Ident ? "an identifier" : "an identifier or null");
      out = j.get<std::string>();
      return true;
    case FieldKind::String:
    case FieldKind::OptString:
      if (!j.is_string()) return expected(field.kind == FieldKind::String ? "a string" : "a string or null");
      out = j.get<std::string>();
      return true;
    case FieldKind::IdentList: {
      if (!j.is_array()) return expected("a list of identifiers");
      IdentList list;
      for (size_t i = 0; i < j.size(); ++i) {
        if (!j[i].is_string()) {
          Scope s(this, i);
          return fail("expected an identifier, got " + std::string(describe(j[i])));
        }
        list.push_back(j[i].get<std::string>());
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
      if (!j.is_number_integer() ||
          (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())))
        return expected(field.kind == FieldKind::Int ? "an integer" : "an integer or null");
      out = j.get<int64_t>();
      return true;
    }
    return fail("unsupported field kind");
  }

  bool float_payload(const json &j, double &out) {
    if (j.is_number()) {
      out = j.get<double>();
      return true;
    }
    if (j.is_string()) {
      const auto &s = j.get_ref<const std::string &>();
      if (s == "inf")
        out = std::numeric_limits<double>::infinity();
      else if (s == "-inf")
        out = -std::numeric_limits<double>::infinity();
      else if (s == "nan")
        out = std::numeric_limits<double>::quiet_NaN();
      else
        return fail("expected a number, \"inf\", \"-inf\" or \"nan\", got \"" + s + "\"");
      return true;
    }
    return fail("expected a number, \"inf\", \"-inf\" or \"nan\", got " + std::string(describe(j)));
  }

  bool constant(const json &j, Constant &out) {
    switch (j.type()) {
    case json::value_t::null: out = NoneValue{}; return true;
    case json::value_t::boolean: out = j.get<bool>(); return true;
    case json::value_t::number_integer: out = j.get<int64_t>(); return true;
    case json::value_t::number_unsigned: {
      uint64_t u = j.get<uint64_t>();
      if (u <= uint64_t(std::numeric_limits<int64_t>::max()))
        out = static_cast<int64_t>(u);
      else
        out = BigInt{std::to_string(u)};
      return true;
    }
    case json::value_t::string: {
      out = Str{j.get<std::string>()};
      return true;
    }
    case json::value_t::object: break;
    default:
      return fail("expected a constant (null, true, false, an integer, a string or a tagged object such as "
                  "{\"float\": 1.5}), got " +
                  std::string(describe(j)));
    }
    if (j.size() != 1)
      return fail("expected a tagged constant with one key (int, float, complex, bytes, codepoints, "
                  "ellipsis), got an object with " +
                  std::to_string(j.size()) + " keys");
    const std::string &tag = j.begin().key();
    const json &v = j.begin().value();
    if (tag != "int" && tag != "float" && tag != "complex" && tag != "bytes" && tag != "codepoints" &&
        tag != "ellipsis")
      return fail("unknown constant tag '" + tag + "' (int, float, complex, bytes, codepoints, ellipsis)");
    Scope s(this, tag);
    if (tag == "int") {
      if (!v.is_string() || !parse_int_constant(v.get_ref<const std::string &>(), out))
        return fail("expected a decimal integer string, got " + v.dump());
      return true;
    }
    if (tag == "float") {
      double d;
      if (!float_payload(v, d)) return false;
      out = Float{d};
      return true;
    }
    if (tag == "complex") {
      if (!v.is_array() || v.size() != 2)
        return fail("expected [real, imag], got " + std::string(describe(v)));
      double parts[2];
      for (size_t i = 0; i < 2; ++i) {
        Scope e(this, i);
        if (!float_payload(v[i], parts[i])) return false;
      }
      out = Complex{parts[0], parts[1]};
      return true;
    }
    if (tag == "bytes") {
      if (!v.is_string())
        return fail("expected a string of characters U+0000..U+00FF, got " + std::string(describe(v)));
      const auto &text = v.get_ref<const std::string &>();
      std::string data;
      data.reserve(text.size());
      for (size_t pos = 0; pos < text.size();) {
        uint32_t cp = decode_utf8(text, pos);
        if (cp > 0xFF)
          return fail("a bytes constant holds characters U+0000..U+00FF only, found U+" + hex(cp));
        data += static_cast<char>(cp);
      }
      out = Bytes{std::move(data)};
      return true;
    }
    if (tag == "codepoints") {
      if (!v.is_array()) return fail("expected a list of code points, got " + std::string(describe(v)));
      std::string utf8;
      for (size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_number_integer() || v[i].get<int64_t>() < 0 || v[i].get<int64_t>() > 0x10FFFF) {
          Scope e(this, i);
          return fail("expected a code point (0 to 1114111), got " + v[i].dump());
        }
        append_utf8(utf8, static_cast<uint32_t>(v[i].get<int64_t>()));
      }
      out = Str{std::move(utf8)};
      return true;
    }
    if (v != json(true)) return fail("expected true, got " + v.dump());
    out = EllipsisValue{};
    return true;
  }

  static std::string hex(uint32_t cp) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%04X", cp);
    return buf;
  }

  const JsonLimits &limits_;
  std::vector<PathStep> path_;
  std::string file_;
  size_t nodes_ = 0;
};

// Line and column (1-based) of byte `offset` in `text`.
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
    DomBuilder builder(2 * limits.max_depth + 16);
    json::sax_parse(text, &builder, json::input_format_t::json, true, false);
    if (builder.error) {
      Span where{std::string(json_name), 0, 0, 0, 0};
      if (builder.error_offset) {
        auto [line, col] = line_col(text, *builder.error_offset > 0 ? *builder.error_offset - 1 : 0);
        where.line = where.end_line = line;
        where.col = where.end_col = col;
      }
      return Diagnostic::error("ast.json", *builder.error, std::move(where));
    }
    TreeReader reader(limits);
    Module m;
    if (!reader.document(builder.root, m))
      return Diagnostic::error("ast.json", *reader.error, Span{std::string(json_name), 0, 0, 0, 0});
    return m;
  } catch (const std::exception &e) {
    return Diagnostic::error("ast.json", std::string("$: cannot load the document: ") + e.what(),
                             Span{std::string(json_name), 0, 0, 0, 0});
  }
}

} // namespace htp::ast
