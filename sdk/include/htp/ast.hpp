// htp/ast.hpp — light C++ views over the host AST for pass authors, a matcher DSL, and adapters that
// turn plain functions and pattern classes into the ABI's pass and pattern callbacks.
//
//   // A whole-module pass body:
//   void annotate(htp::PassContext &ctx) {
//     ctx.module().root().walk([&](htp::NodeRef n) {
//       if (n.is("Call") && n.child("func").dotted_name() == "pto.add") n.set_attr("pto.op", "\"add\"");
//     });
//   }
//   // A rewrite pattern (one static instance; the host drives it to a fixpoint):
//   struct FoldAddZero {
//     static constexpr const char *name = "fold-add-zero";
//     static constexpr std::array<const char *, 1> roots{"BinOp"};
//     static constexpr int32_t benefit = 1;
//     // Rewrites and returns true where it applies; returns false, changing nothing, elsewhere.
//     bool match_and_rewrite(htp::NodeRef n, htp::PassContext &ctx) const { ... }
//   };
//   (The older pair `bool match(...) const` + `void apply(...) const` is still accepted.)
//   r.add(htp::PassSpec{.info = {...}, .stage = HTP_STAGE_CANONICALIZE,
//                       .run = htp::pass_body<annotate>, .patterns = {htp::pattern<FoldAddZero>()}});
#pragma once

#include <htp/plugin.hpp>

#include <array>
#include <cstddef>
#include <charconv>
#include <concepts>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace htp {

class ModuleRef;
class PassContext;

/// JSON scalars as attribute values hold them (attributes travel as JSON text through the ABI), so pass
/// code reads `attr_string("tile.space")` instead of comparing with "\"tile\"".
namespace json_scalar {

/// The value of a JSON string literal; nullopt when `text` is not one.
inline std::optional<std::string> parse_string(std::string_view text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return std::nullopt;
  std::string out;
  auto hex4 = [&](size_t at, uint32_t &v) {
    if (at + 4 > text.size() - 1) return false;
    v = 0;
    for (size_t k = at; k < at + 4; ++k) {
      const char c = text[k];
      const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) return false;
      v = v * 16 + uint32_t(d);
    }
    return true;
  };
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (c == '"' || static_cast<unsigned char>(c) < 0x20) return std::nullopt;
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i + 1 > text.size() - 1) return std::nullopt;
    switch (text[i]) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case '/': out += '/'; break;
      case 'b': out += '\b'; break;
      case 'f': out += '\f'; break;
      case 'n': out += '\n'; break;
      case 'r': out += '\r'; break;
      case 't': out += '\t'; break;
      case 'u': {
        uint32_t cp = 0, lo = 0;
        if (!hex4(i + 1, cp)) return std::nullopt;
        i += 4;
        if (cp >= 0xD800 && cp < 0xDC00) {  // a surrogate pair
          if (i + 2 >= text.size() - 1 || text[i + 1] != '\\' || text[i + 2] != 'u' || !hex4(i + 3, lo) || lo < 0xDC00 || lo > 0xDFFF)
            return std::nullopt;
          i += 6;
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        } else if (cp >= 0xDC00 && cp < 0xE000) {
          return std::nullopt;
        }
        if (cp < 0x80) out += char(cp);
        else if (cp < 0x800) out += {char(0xC0 | (cp >> 6)), char(0x80 | (cp & 0x3F))};
        else if (cp < 0x10000) out += {char(0xE0 | (cp >> 12)), char(0x80 | ((cp >> 6) & 0x3F)), char(0x80 | (cp & 0x3F))};
        else out += {char(0xF0 | (cp >> 18)), char(0x80 | ((cp >> 12) & 0x3F)), char(0x80 | ((cp >> 6) & 0x3F)), char(0x80 | (cp & 0x3F))};
        break;
      }
      default: return std::nullopt;
    }
  }
  return out;
}

/// `value` as a JSON string literal.
inline std::string quote(std::string_view value) {
  std::string out = "\"";
  for (char c : value) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static const char *digits = "0123456789abcdef";
          out += "\\u00";
          out += digits[(c >> 4) & 0xF];
          out += digits[c & 0xF];
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

/// The value of a JSON integer (no fraction or exponent) that fits 64 bits; nullopt otherwise.
inline std::optional<int64_t> parse_int(std::string_view text) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return v;
}

/// true / false; nullopt otherwise.
inline std::optional<bool> parse_bool(std::string_view text) {
  if (text == "true") return true;
  if (text == "false") return false;
  return std::nullopt;
}

}  // namespace json_scalar

/// Thrown from pass code to stop the pass with an error already reported (or with this message).
class PassError : public std::runtime_error {
public:
  explicit PassError(const std::string &message) : std::runtime_error(message) {}
};

namespace json_detail {

/// A JSON value built bottom-up through the library's SAX interface: an object's members are collected, then
/// moved into it at once, its storage reserved. (The library's own parser grows an ordered_json object member
/// by member, and each reallocation copies the values before it: quadratic in the nesting of a deep kernel.)
template <class Json> class BottomUp {
public:
  using string_t = typename Json::string_t;
  bool null() { return value(Json(nullptr)); }
  bool boolean(bool b) { return value(Json(b)); }
  bool number_integer(typename Json::number_integer_t v) { return value(Json(v)); }
  bool number_unsigned(typename Json::number_unsigned_t v) { return value(Json(v)); }
  bool number_float(typename Json::number_float_t v, const string_t &) { return value(Json(v)); }
  bool string(string_t &v) { return value(Json(std::move(v))); }
  bool binary(typename Json::binary_t &v) { return value(Json::binary(std::move(v))); }
  bool start_object(std::size_t) { return frames_.push_back(Frame{true, {}, {}, {}}), true; }
  bool key(string_t &k) { return frames_.back().key = std::move(k), true; }
  bool end_object() {
    Frame f = std::move(frames_.back());
    frames_.pop_back();
    Json o = Json::object();
    auto &members = o.template get_ref<typename Json::object_t &>();
    if constexpr (requires { members.reserve(std::size_t{}); }) members.reserve(f.members.size());
    for (auto &[k, v] : f.members) o[k] = std::move(v);  // (a repeated key: the last one, as the parser)
    return value(std::move(o));
  }
  bool start_array(std::size_t) { return frames_.push_back(Frame{false, {}, {}, {}}), true; }
  bool end_array() {
    Frame f = std::move(frames_.back());
    frames_.pop_back();
    Json a = Json::array();
    a.template get_ref<typename Json::array_t &>() = std::move(f.items);
    return value(std::move(a));
  }
  template <class Exception> bool parse_error(std::size_t, const std::string &, const Exception &) { return false; }
  Json root;

private:
  struct Frame {
    bool object;
    std::vector<Json> items;
    std::vector<std::pair<string_t, Json>> members;
    string_t key;
  };
  bool value(Json v) {
    if (frames_.empty())
      root = std::move(v);
    else if (Frame &f = frames_.back(); f.object)
      f.members.emplace_back(std::move(f.key), std::move(v));
    else
      f.items.push_back(std::move(v));
    return true;
  }
  std::vector<Frame> frames_;
};

}  // namespace json_detail

/// `text` parsed with a JSON library's type (nlohmann::json, ordered_json), built bottom-up so that a document
/// nested thousands deep costs its size; nullopt when it is not JSON.
template <class Json> std::optional<Json> parse_json(std::string_view text) {
  json_detail::BottomUp<Json> built;
  if (!Json::sax_parse(text, &built)) return std::nullopt;
  return std::move(built.root);
}

/// A borrowed view of one AST node: the host table plus the node handle. Cheap to copy.
class NodeRef {
public:
  NodeRef() = default;
  NodeRef(const HtpHostApi *api, HtpNode *node) : api_(api), node_(node) {}

  explicit operator bool() const { return node_ != nullptr; }
  HtpNode *handle() const { return node_; }
  const HtpHostApi *api() const { return api_; }
  friend bool operator==(const NodeRef &a, const NodeRef &b) { return a.node_ == b.node_; }

  /// The kind number (compare with kind_id(), which can be cached).
  int32_t kind() const { return node_ ? api_->node_kind(api_->host, node_) : -1; }
  /// The Python node type name ("Call").
  std::string_view type() const { return view(api_->ast_kind_name(api_->host, kind())); }
  /// Whether the node is of type `type_name`.
  bool is(std::string_view type_name) const { return node_ && type() == type_name; }

  /// The node in a node field (empty view when null).
  NodeRef child(std::string_view field) const {
    return NodeRef(api_, node_ ? api_->node_child(api_->host, node_, to_htp_str(field)) : nullptr);
  }
  /// The node in field number `index` (see field_index()): the fast path for hot matchers.
  NodeRef child_at(int32_t index) const {
    return NodeRef(api_, node_ ? api_->node_child_at(api_->host, node_, index) : nullptr);
  }
  /// The field number of `field` in nodes of this node's kind, or -1 (cache it per kind).
  int32_t field_index(std::string_view field) const {
    return api_->ast_field_index(api_->host, kind(), to_htp_str(field));
  }
  /// Length of a list field.
  size_t size(std::string_view field) const {
    return node_ ? api_->node_list_size(api_->host, node_, to_htp_str(field)) : 0;
  }
  /// Entry `i` of a node-list field.
  NodeRef item(std::string_view field, size_t i) const {
    return NodeRef(api_, node_ ? api_->node_list_item(api_->host, node_, to_htp_str(field), i) : nullptr);
  }
  /// All entries of a node-list field.
  std::vector<NodeRef> items(std::string_view field) const {
    std::vector<NodeRef> out;
    for (size_t i = 0, n = size(field); i < n; ++i) out.push_back(item(field, i));
    return out;
  }
  /// An identifier or string field.
  std::optional<std::string> text(std::string_view field) const {
    HtpStr s{};
    if (!node_ || api_->node_text(api_->host, node_, to_htp_str(field), SIZE_MAX, &s) != HTP_OK) return std::nullopt;
    return from_htp_str(s);
  }
  /// An integer field.
  std::optional<int64_t> integer(std::string_view field) const {
    int64_t v = 0;
    if (!node_ || api_->node_int(api_->host, node_, to_htp_str(field), &v) != HTP_OK) return std::nullopt;
    return v;
  }
  /// A constant field ("value" of a Constant node).
  std::optional<HtpConstant> constant(std::string_view field = "value") const {
    HtpConstant c{};
    c.struct_size = sizeof c;
    if (!node_ || api_->node_constant(api_->host, node_, to_htp_str(field), &c) != HTP_OK) return std::nullopt;
    return c;
  }
  /// The int of a Constant node holding an int64.
  std::optional<int64_t> int_constant() const {
    if (!is("Constant")) return std::nullopt;
    auto c = constant();
    if (!c || c->kind != HTP_CONST_INT) return std::nullopt;
    return c->i;
  }
  /// The source span.
  HtpSpan span() const { return node_ ? api_->node_span(api_->host, node_) : HtpSpan{}; }
  /// The span as a SourceSpan for diagnostics.
  SourceSpan source_span() const {
    HtpSpan s = span();
    return SourceSpan{from_htp_str(s.file), s.line, s.col, s.end_line, s.end_col};
  }
  /// The stable id, e.g. "kernel/body[2]/value".
  std::string id() const { return node_ ? from_htp_str(api_->node_id(api_->host, node_)) : std::string(); }
  /// The parent node (empty for a root or detached node).
  NodeRef parent() const { return NodeRef(api_, node_ ? api_->node_parent(api_->host, node_) : nullptr); }
  /// A metadata attribute as JSON text.
  std::optional<std::string> attr(std::string_view key) const {
    HtpStr s{};
    if (!node_ || api_->node_attr_get(api_->host, node_, to_htp_str(key), &s) != HTP_OK) return std::nullopt;
    return from_htp_str(s);
  }
  /// Typed reads of an attribute: nullopt when it is absent or of another JSON type.
  std::optional<std::string> attr_string(std::string_view key) const { return typed(attr(key), json_scalar::parse_string); }
  std::optional<int64_t> attr_int(std::string_view key) const { return typed(attr(key), json_scalar::parse_int); }
  std::optional<bool> attr_bool(std::string_view key) const { return typed(attr(key), json_scalar::parse_bool); }
  /// An attribute parsed with a JSON library's type, e.g. `attr_json<nlohmann::json>("wsp.task")`; nullopt
  /// when absent; PassError naming the attribute when it is not JSON.
  template <class Json> std::optional<Json> attr_json(std::string_view key) const {
    return parse_json<Json>(attr(key), key);
  }
  /// Sets a namespaced metadata attribute from JSON text; throws PassError when rejected.
  void set_attr(std::string_view key, std::string_view json, HtpDiag *sink = nullptr) const {
    if (api_->node_attr_set(api_->host, node_, to_htp_str(key), to_htp_str(json), sink) != HTP_OK)
      throw PassError("cannot set attribute '" + std::string(key) + "'");
  }
  void set_attr_string(std::string_view key, std::string_view value, HtpDiag *sink = nullptr) const {
    set_attr(key, json_scalar::quote(value), sink);
  }
  void set_attr_int(std::string_view key, int64_t value, HtpDiag *sink = nullptr) const {
    set_attr(key, std::to_string(value), sink);
  }

  /// "a.b.c" for a Name/Attribute chain, else empty.
  std::string dotted_name() const {
    if (is("Name")) return text("id").value_or("");
    if (is("Attribute")) {
      std::string base = child("value").dotted_name();
      return base.empty() ? std::string() : base + "." + text("attr").value_or("");
    }
    return {};
  }

  /// Calls f(node) on this node and every node below, pre-order; f may return false to skip children.
  template <class F> void walk(F &&f) const {
    if (!node_) return;
    if constexpr (std::is_same_v<std::invoke_result_t<F &, NodeRef>, bool>) {
      if (!f(*this)) return;
    } else {
      f(*this);
    }
    for (size_t i = 0, nf = api_->node_field_count(api_->host, node_); i < nf; ++i) {
      std::string_view field = view(api_->node_field_name(api_->host, node_, i));
      if (NodeRef c = child(field)) c.walk(f);
      for (size_t j = 0, n = size(field); j < n; ++j)
        if (NodeRef c = item(field, j)) c.walk(f);
    }
  }

private:
  static std::string_view view(HtpStr s) { return s.ptr ? std::string_view(s.ptr, s.len) : std::string_view(); }
  template <class Parse>
  static auto typed(const std::optional<std::string> &text, Parse parse) -> decltype(parse(std::string_view())) {
    if (!text) return std::nullopt;
    return parse(*text);
  }
  template <class Json> static std::optional<Json> parse_json(const std::optional<std::string> &text, std::string_view key) {
    if (!text) return std::nullopt;
    auto j = htp::parse_json<Json>(*text);
    if (!j) throw PassError("attribute '" + std::string(key) + "' is not valid JSON");
    return j;
  }
  friend class ModuleRef;

  const HtpHostApi *api_ = nullptr;
  HtpNode *node_ = nullptr;
};

/// The module a pass works on: its root, attributes, and edits (which keep handles valid).
class ModuleRef {
public:
  ModuleRef(const HtpHostApi *api, HtpModule *m, HtpDiag *sink) : api_(api), m_(m), sink_(sink) {}

  NodeRef root() const { return NodeRef(api_, api_->module_root(api_->host, m_)); }
  std::string file() const { return from_htp_str(api_->module_file(api_->host, m_)); }
  /// A module attribute as JSON text.
  std::optional<std::string> attr(std::string_view key) const {
    HtpStr s{};
    if (api_->module_attr_get(api_->host, m_, to_htp_str(key), &s) != HTP_OK) return std::nullopt;
    return from_htp_str(s);
  }
  /// Typed reads of a module attribute: nullopt when it is absent or of another JSON type.
  std::optional<std::string> attr_string(std::string_view key) const {
    return NodeRef::typed(attr(key), json_scalar::parse_string);
  }
  std::optional<int64_t> attr_int(std::string_view key) const { return NodeRef::typed(attr(key), json_scalar::parse_int); }
  std::optional<bool> attr_bool(std::string_view key) const { return NodeRef::typed(attr(key), json_scalar::parse_bool); }
  /// A module attribute parsed with a JSON library's type, e.g. `attr_json<nlohmann::json>("csp.graph")`;
  /// nullopt when absent; PassError naming the attribute when it is not JSON.
  template <class Json> std::optional<Json> attr_json(std::string_view key) const {
    return NodeRef::parse_json<Json>(attr(key), key);
  }
  /// A member object of the frontend's `htp.capture` attribute: "constants" (captured globals by name) or
  /// "modules" (global names bound to modules, docs/python.md); an empty object when absent or malformed.
  template <class Json> Json capture_table(std::string_view member) const {
    Json out = Json::object();
    auto text = attr("htp.capture");
    if (!text) return out;
    Json j = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) return out;
    auto it = j.find(std::string(member));
    if (it != j.end() && it->is_object()) out = *it;
    return out;
  }
  void set_attr(std::string_view key, std::string_view json) const {
    check(api_->module_attr_set(api_->host, m_, to_htp_str(key), to_htp_str(json), sink_), "set_attr");
  }
  void set_attr_string(std::string_view key, std::string_view value) const { set_attr(key, json_scalar::quote(value)); }
  void set_attr_int(std::string_view key, int64_t value) const { set_attr(key, std::to_string(value)); }
  /// A new detached node of `type` at `span`.
  NodeRef create(std::string_view type, const HtpSpan *span = nullptr) const {
    HtpNode *n = api_->node_create(api_->host, m_, to_htp_str(type), span);
    if (!n) throw PassError("cannot create a node of type '" + std::string(type) + "'");
    return NodeRef(api_, n);
  }
  /// A detached deep copy.
  NodeRef clone(NodeRef n) const { return NodeRef(api_, api_->node_clone(api_->host, m_, n.handle())); }
  void set_child(NodeRef node, std::string_view field, NodeRef child) const {
    check(api_->node_set_child(api_->host, m_, node.handle(), to_htp_str(field), child.handle(), sink_), "set_child");
  }
  void set_text(NodeRef node, std::string_view field, std::string_view text) const {
    check(api_->node_set_text(api_->host, m_, node.handle(), to_htp_str(field), to_htp_str(text), sink_), "set_text");
  }
  void set_int(NodeRef node, std::string_view field, int64_t v) const {
    check(api_->node_set_int(api_->host, m_, node.handle(), to_htp_str(field), v, sink_), "set_int");
  }
  void set_constant(NodeRef node, const HtpConstant &c, std::string_view field = "value") const {
    check(api_->node_set_constant(api_->host, m_, node.handle(), to_htp_str(field), &c, sink_), "set_constant");
  }
  void insert(NodeRef node, std::string_view field, size_t index, NodeRef child) const {
    check(api_->node_list_insert(api_->host, m_, node.handle(), to_htp_str(field), index, child.handle(), sink_),
          "insert");
  }
  void erase(NodeRef node, std::string_view field, size_t index) const {
    check(api_->node_list_erase(api_->host, m_, node.handle(), to_htp_str(field), index, sink_), "erase");
  }
  /// Puts `with` (detached) where `node` is; `node` becomes detached.
  void replace(NodeRef node, NodeRef with) const {
    check(api_->node_replace(api_->host, m_, node.handle(), with.handle(), sink_), "replace");
  }
  /// A new Constant node holding an int, at `span`.
  NodeRef int_constant(int64_t v, const HtpSpan *span = nullptr) const {
    NodeRef n = create("Constant", span);
    HtpConstant c{};
    c.struct_size = sizeof c;
    c.kind = HTP_CONST_INT;
    c.i = v;
    set_constant(n, c);
    return n;
  }

private:
  static void check(HtpStatus s, const char *what) {
    if (s != HTP_OK) throw PassError(std::string(what) + " was rejected (see the diagnostic)");
  }
  const HtpHostApi *api_;
  HtpModule *m_;
  HtpDiag *sink_;
};

/// One pass or scanner invocation.
class PassContext {
public:
  PassContext(const HtpHostApi *api, HtpPassContext *ctx) : api_(api), ctx_(ctx) {}

  const HtpHostApi *api() const { return api_; }
  HtpPassContext *handle() const { return ctx_; }
  HtpDiag *diag() const { return api_->pass_diag(api_->host, ctx_); }
  ModuleRef module() const { return ModuleRef(api_, api_->pass_module(api_->host, ctx_), diag()); }

  /// An option as JSON text ("target", pass parameters).
  std::optional<std::string> option(std::string_view key) const {
    HtpStr s{};
    if (api_->pass_option(api_->host, ctx_, to_htp_str(key), &s) != HTP_OK) return std::nullopt;
    return from_htp_str(s);
  }
  /// Writes a package file (emit and package passes only); throws PassError when refused.
  void write_file(std::string_view path, std::string_view bytes, std::string_view role) const {
    if (api_->pass_write_file(api_->host, ctx_, to_htp_str(path), to_htp_str(bytes), to_htp_str(role), diag()) !=
        HTP_OK)
      throw PassError("writing '" + std::string(path) + "' was refused");
  }
  /// Records an obligation raised at `at` (scanners only).
  /// One step of an island (ABI 1.5, HtpIslandStep): an external tool run by the host.
  struct IslandStep {
    std::string name;                ///< Record directory: ir/islands/<pass>/<name>/.
    std::vector<std::string> argv;   ///< argv[0] the tool; "{input}" / "{output}" name files.
    std::string input;
    std::string input_name = "input", output_name = "output";
    uint32_t timeout_ms = 0;         ///< 0: the host's default (120 s).
    std::string package;             ///< Debian package providing the tool, for the "not installed" message.
  };

  /// Runs an island step; its output, or nullopt when it failed (reported into this invocation's
  /// diagnostics: at the location the tool names, else at `at`).
  std::optional<std::string> run_island(const IslandStep &step, NodeRef at = {}) const {
    if (!Host(api_).has(offsetof(HtpHostApi, island_run) + sizeof(api_->island_run)) || !api_->island_run) {
      Host(api_).error(diag(), "island.unsupported", "this host predates islands (ABI 1.5)", at.source_span());
      return std::nullopt;
    }
    std::vector<HtpStr> argv;
    for (const auto &a : step.argv) argv.push_back(to_htp_str(a));
    HtpIslandStep s{};
    s.struct_size = sizeof s;
    s.name = to_htp_str(step.name);
    s.argv = HtpStrList{argv.empty() ? nullptr : argv.data(), argv.size()};
    s.input = to_htp_str(step.input);
    s.input_name = to_htp_str(step.input_name);
    s.output_name = to_htp_str(step.output_name);
    s.timeout_ms = step.timeout_ms;
    s.at = at.span();
    s.package = to_htp_str(step.package);
    HtpStr out{};
    if (api_->island_run(api_->host, ctx_, &s, &out) != HTP_OK) return std::nullopt;
    return from_htp_str(out);
  }

  void add_obligation(std::string_view capability, NodeRef at) const {
    HtpSpan span = at.span();
    if (api_->obligation_add(api_->host, ctx_, to_htp_str(capability), &span, diag()) != HTP_OK)
      throw PassError("obligation '" + std::string(capability) + "' was refused");
  }
  /// Reports an error at `at` (the pass continues; it fails at the end when errors were reported).
  void error(NodeRef at, std::string_view code, std::string_view message) const {
    Host(api_).error(diag(), code, message, at.source_span());
  }
  void warning(NodeRef at, std::string_view code, std::string_view message) const {
    Host(api_).report(diag(), HTP_SEV_WARNING, code, message, at.source_span());
  }

private:
  const HtpHostApi *api_;
  HtpPassContext *ctx_;
};

namespace detail {

template <void (*Fn)(PassContext &)>
HtpStatus pass_body_trampoline(void *, const HtpHostApi *api, HtpPassContext *ctx) {
  HtpDiag *sink = api->pass_diag(api->host, ctx);
  try {
    PassContext pc(api, ctx);
    Fn(pc);
    return HTP_OK;
  } catch (const PassError &e) {
    Host(api).error(sink, "pass.error", e.what());
    return HTP_ERR;
  } catch (...) {
    return report_exception(api, sink);
  }
}

template <class P> P &pattern_instance() {
  static P instance;
  return instance;
}

template <class P> int32_t pattern_match(void *, const HtpHostApi *api, HtpPassContext *ctx, const HtpNode *n) {
  try {
    PassContext pc(api, ctx);
    return pattern_instance<P>().match(NodeRef(api, const_cast<HtpNode *>(n)), pc) ? 1 : 0;
  } catch (...) {
    (void)report_exception(api, api->pass_diag(api->host, ctx));
    return 0;
  }
}

template <class P> HtpStatus pattern_apply(void *, const HtpHostApi *api, HtpPassContext *ctx, HtpNode *n) {
  HtpDiag *sink = api->pass_diag(api->host, ctx);
  try {
    PassContext pc(api, ctx);
    pattern_instance<P>().apply(NodeRef(api, n), pc);
    return HTP_OK;
  } catch (const PassError &e) {
    Host(api).error(sink, "pass.error", std::string(P::name) + ": " + e.what());
    return HTP_ERR;
  } catch (...) {
    return report_exception(api, sink);
  }
}

template <class P>
HtpRewriteResult pattern_match_and_rewrite(void *, const HtpHostApi *api, HtpPassContext *ctx, HtpNode *n) {
  // The sink is fetched only when reporting: the driver offers every node it can root at.
  try {
    PassContext pc(api, ctx);
    return pattern_instance<P>().match_and_rewrite(NodeRef(api, n), pc) ? HTP_REWRITE_APPLIED
                                                                       : HTP_REWRITE_NO_MATCH;
  } catch (const PassError &e) {
    Host(api).error(api->pass_diag(api->host, ctx), "pass.error", std::string(P::name) + ": " + e.what());
    return HTP_REWRITE_FAILED;
  } catch (...) {
    (void)report_exception(api, api->pass_diag(api->host, ctx));
    return HTP_REWRITE_FAILED;
  }
}

template <class P>
concept OneCallbackPattern = requires(const P &p, NodeRef n, PassContext &ctx) {
  { p.match_and_rewrite(n, ctx) } -> std::convertible_to<bool>;
};

}  // namespace detail

/// The ABI callback for a pass body `void fn(htp::PassContext&)`.
template <void (*Fn)(PassContext &)> inline constexpr auto pass_body = &detail::pass_body_trampoline<Fn>;

/// The PatternSpec of a pattern class P: `name`, `roots` (node type names), `benefit`, and either
/// `bool match_and_rewrite(NodeRef, PassContext&) const` (rewrites through ctx.module() and returns true
/// when it applies, returns false with the tree untouched otherwise: the match is computed once) or the
/// pair `bool match(NodeRef, PassContext&) const` + `void apply(NodeRef, PassContext&) const`. One static
/// instance serves all.
template <class P> PatternSpec pattern() {
  PatternSpec s;
  s.name = P::name;
  for (const char *r : P::roots) s.roots.push_back(r);
  s.benefit = P::benefit;
  if constexpr (detail::OneCallbackPattern<P>) {
    s.match_and_rewrite = &detail::pattern_match_and_rewrite<P>;
  } else {
    s.match = &detail::pattern_match<P>;
    s.apply = &detail::pattern_apply<P>;
  }
  return s;
}

// ---- Matcher DSL ----------------------------------------------------------------------------------

/// Named sub-nodes captured by a match.
class Captures {
public:
  void set(const std::string &name, NodeRef n) { nodes_[name] = n; }
  /// The captured node (empty view when not captured).
  NodeRef operator[](const std::string &name) const {
    auto it = nodes_.find(name);
    return it == nodes_.end() ? NodeRef() : it->second;
  }
  bool has(const std::string &name) const { return nodes_.count(name) != 0; }

private:
  std::map<std::string, NodeRef> nodes_;
};

/// A composable node predicate that can capture sub-nodes.
class Matcher {
public:
  using Fn = std::function<bool(NodeRef, Captures &)>;
  explicit Matcher(Fn fn) : fn_(std::move(fn)) {}

  /// Whether `n` matches; captures are added to `c`.
  bool operator()(NodeRef n, Captures &c) const { return fn_(n, c); }
  /// Whether `n` matches, discarding captures.
  bool matches(NodeRef n) const {
    Captures c;
    return fn_(n, c);
  }
  /// The same matcher, also capturing the matched node as `name`.
  Matcher capture(std::string name) const {
    Fn inner = fn_;
    return Matcher([inner, name](NodeRef n, Captures &c) {
      if (!inner(n, c)) return false;
      c.set(name, n);
      return true;
    });
  }

private:
  Fn fn_;
};

/// For a program in which no dialect found an entry point: the first top-level function that has decorators,
/// and a clause naming them ("'pipeline' is decorated with @Channel, which makes none of them (@kernel,
/// @workload or @program does)"), which a backend's "no kernel, workload or CSP program" error places and
/// appends (a function decorated with a dialect's other name).
struct DecoratedFunction {
  SourceSpan span;
  std::string sentence;
};
inline std::optional<DecoratedFunction> first_decorated_function(const ModuleRef &module) {
  for (NodeRef f : module.root().items("body")) {
    if (!f.is("FunctionDef") || f.size("decorator_list") == 0) continue;
    std::string names;
    for (NodeRef d : f.items("decorator_list"))
      names += (names.empty() ? "@" : ", @") + (d.is("Call") ? d.child("func") : d).dotted_name();
    return DecoratedFunction{f.source_span(), "'" + f.text("name").value_or("") + "' is decorated with " + names +
                                                  ", which makes none of them (@kernel, @workload or @program does)"};
  }
  return std::nullopt;
}

namespace match {

/// Any present node.
inline Matcher any() {
  return Matcher([](NodeRef n, Captures &) { return static_cast<bool>(n); });
}
/// A node of a type.
inline Matcher type(std::string type_name) {
  return Matcher([type_name](NodeRef n, Captures &) { return n.is(type_name); });
}
/// A Name or Attribute chain spelling `dotted` ("pto.add", "P").
inline Matcher name(std::string dotted) {
  return Matcher([dotted](NodeRef n, Captures &) { return n && n.dotted_name() == dotted; });
}
/// Every matcher matches the same node.
inline Matcher all_of(std::vector<Matcher> ms) {
  return Matcher([ms](NodeRef n, Captures &c) {
    for (const auto &m : ms)
      if (!m(n, c)) return false;
    return true;
  });
}
/// Some matcher matches (the first that does records its captures).
inline Matcher any_of(std::vector<Matcher> ms) {
  return Matcher([ms](NodeRef n, Captures &c) {
    for (const auto &m : ms) {
      Captures tmp = c;
      if (m(n, tmp)) {
        c = tmp;
        return true;
      }
    }
    return false;
  });
}
/// The node's field `f` matches `m`.
inline Matcher field(std::string f, Matcher m) {
  return Matcher([f, m](NodeRef n, Captures &c) { return n && m(n.child(f), c); });
}
/// A call whose callee spells `callee` (dotted); when `args` is given, exactly that many positional
/// arguments, each matching in order.
inline Matcher call(std::string callee, std::optional<std::vector<Matcher>> args = std::nullopt) {
  return Matcher([callee, args](NodeRef n, Captures &c) {
    if (!n.is("Call") || n.child("func").dotted_name() != callee) return false;
    if (!args) return true;
    if (n.size("args") != args->size()) return false;
    for (size_t i = 0; i < args->size(); ++i)
      if (!(*args)[i](n.item("args", i), c)) return false;
    return true;
  });
}
/// A call of any callee whose callee node matches `callee`.
inline Matcher call_of(Matcher callee) {
  return Matcher([callee](NodeRef n, Captures &c) { return n.is("Call") && callee(n.child("func"), c); });
}
/// A subscript `value[slice]`.
inline Matcher subscript(Matcher value, Matcher slice = any()) {
  return Matcher([value, slice](NodeRef n, Captures &c) {
    return n.is("Subscript") && value(n.child("value"), c) && slice(n.child("slice"), c);
  });
}
/// A `for target in iter:` loop whose iterable matches `iter` (e.g. call("P")).
inline Matcher for_over(Matcher iter, Matcher target = any()) {
  return Matcher([iter, target](NodeRef n, Captures &c) {
    return n.is("For") && iter(n.child("iter"), c) && target(n.child("target"), c);
  });
}
/// A Constant holding the int64 `v`.
inline Matcher int_constant(int64_t v) {
  return Matcher([v](NodeRef n, Captures &) { return n.int_constant() == std::optional<int64_t>(v); });
}

}  // namespace match

}  // namespace htp
