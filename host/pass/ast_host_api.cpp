// The ABI 1.1 functions of HtpHostApi: AST access, module attributes, pass invocations.
#include <htp/capability.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <limits>
#include <type_traits>

#include "ast/grammar.hpp"
#include "ast/stable_id.hpp"
#include "ast/unicode.hpp"
#include "island/island.hpp"
#include "package/package_writer.hpp"
#include "pass/invocation.hpp"

using htp::ast::Node;
using htp::ast::NodePtr;

// ---- HtpModule -----------------------------------------------------------------------------------

HtpNode *HtpModule::keep(NodePtr node) {
  Node *raw = node.get();
  if (raw) detached.push_back(std::move(node));
  return htp::to_handle(raw);
}

NodePtr HtpModule::take(HtpNode *handle) {
  Node *n = htp::to_node(handle);
  if (!n || n->parent()) return nullptr;
  for (auto it = detached.begin(); it != detached.end(); ++it)
    if (it->get() == n) {
      NodePtr out = std::move(*it);
      detached.erase(it);
      return out;
    }
  return nullptr;
}

namespace htp {

namespace {

/// Strings computed for a caller (ids, JSON) live here until the next such call on this thread.
thread_local std::string scratch;

HtpStr str(std::string_view s) { return HtpStr{s.data(), s.size()}; }
std::string_view view(HtpStr s) { return s.ptr ? std::string_view(s.ptr, s.len) : std::string_view(); }

/// A name from a plugin quoted in a message: at most 200 bytes of it (a 5 MiB key was echoed whole).
std::string quoted_name(std::string_view s) {
  constexpr size_t kMax = 200;
  if (s.size() <= kMax) return std::string(s);
  return std::string(s.substr(0, kMax)) + "... (" + std::to_string(s.size()) + " bytes)";
}

HtpStr keep_scratch(std::string s) {
  scratch = std::move(s);
  return str(scratch);
}

void report(HtpDiag *sink, const char *code, std::string message, const Node *at = nullptr) {
  if (!sink || !sink->list) return;
  Span span = at ? at->span() : Span{};
  sink->list->report(Diagnostic::error(code, std::move(message), std::move(span)));
}

std::string where(const Node *n) { return n ? std::string(n->type_name()) + " '" + ast::stable_id(*n) + "'" : "?"; }

/// Reports a failed Expected and returns the status for it.
template <class T> HtpStatus check(const Expected<T> &r, HtpDiag *sink, const Node *at) {
  if (r) return HTP_OK;
  if (sink && sink->list) {
    Diagnostic d = r.error();
    if (!d.span.known() && at) d.span = at->span();
    sink->list->report(std::move(d));
  }
  return HTP_ERR_INVALID_ARGUMENT;
}

/// Keeps the nodes of a replaced field value alive in the module's detached set.
/// Tells the module's listener (the rewrite driver), if any, about an edit.
void notify_will_edit(HtpModule *m) {
  if (m->listener) m->listener->will_edit();
}
void notify_changed(HtpModule *m, Node *n) {
  if (m->listener && n) m->listener->changed(*n);
}
void notify_inserted(HtpModule *m, Node *n) {
  if (m->listener && n) m->listener->inserted(*n);
}
/// Reports the nodes a field value held before `from` let go of them.
void notify_removed(HtpModule *m, const ast::Value &v, Node *from) {
  if (!m->listener) return;
  if (auto *p = std::get_if<NodePtr>(&v); p && *p) m->listener->removed(**p, *from);
  if (auto *l = std::get_if<ast::NodeList>(&v))
    for (auto &n : *l)
      if (n) m->listener->removed(*n, *from);
}

void keep_value(HtpModule *m, ast::Value &&v) {
  if (auto *p = std::get_if<NodePtr>(&v)) {
    m->keep(std::move(*p));
  } else if (auto *l = std::get_if<ast::NodeList>(&v)) {
    for (auto &n : *l) m->keep(std::move(n));
  }
}

// ---- reads ----------------------------------------------------------------------------------------

int32_t ast_kind_id(HtpHost *, HtpStr name) {
  auto k = ast::kind_from_name(view(name));
  return k ? static_cast<int32_t>(*k) : -1;
}

HtpStr ast_kind_name(HtpHost *, int32_t kind) {
  if (kind < 0 || static_cast<size_t>(kind) >= ast::kKindCount) return HtpStr{nullptr, 0};
  return str(ast::kind_name(static_cast<ast::Kind>(kind)));
}

int32_t node_kind(HtpHost *, const HtpNode *n) { return n ? static_cast<int32_t>(to_node(n)->kind()) : -1; }

HtpSpan node_span(HtpHost *, const HtpNode *n) {
  if (!n) return HtpSpan{};
  const Span &s = to_node(n)->span();
  return HtpSpan{str(s.file), s.line, s.col, s.end_line, s.end_col};
}

HtpNode *node_parent(HtpHost *, const HtpNode *n) { return n ? to_handle(to_node(n)->parent()) : nullptr; }

HtpStr node_id(HtpHost *, const HtpNode *n) { return n ? keep_scratch(ast::stable_id(*to_node(n))) : HtpStr{}; }

size_t node_field_count(HtpHost *, const HtpNode *n) { return n ? to_node(n)->field_count() : 0; }

HtpStr node_field_name(HtpHost *, const HtpNode *n, size_t index) {
  if (!n || index >= to_node(n)->field_count()) return HtpStr{};
  return str(to_node(n)->field_info(index).name);
}

// Each kind's grammar fields, copied once at load so node_child makes no out-of-line call for them.
const std::array<std::span<const ast::FieldInfo>, ast::kKindCount> kFieldsOfKind = [] {
  std::array<std::span<const ast::FieldInfo>, ast::kKindCount> out{};
  for (size_t k = 0; k < ast::kKindCount; ++k) out[k] = ast::kind_info(static_cast<ast::Kind>(k)).fields;
  return out;
}();

HtpNode *node_child(HtpHost *, const HtpNode *n, HtpStr field) {
  // The by-name form plugins call in matchers: scan the kind's few fields here, rejecting on length and
  // first byte before comparing, instead of going through Node::child (three out-of-line calls).
  if (!n || field.len == 0) return nullptr;
  const Node *node = to_node(n);
  const auto fields = kFieldsOfKind[static_cast<size_t>(node->kind())];
  for (size_t i = 0; i < fields.size(); ++i) {
    const std::string_view name = fields[i].name;
    if (name.size() != field.len || name[0] != field.ptr[0] || std::memcmp(name.data(), field.ptr, field.len) != 0)
      continue;
    auto *p = std::get_if<NodePtr>(&node->field(i));
    return p ? to_handle(p->get()) : nullptr;
  }
  return nullptr;
}

int32_t ast_field_index(HtpHost *, int32_t kind, HtpStr name) {
  if (kind < 0 || static_cast<size_t>(kind) >= ast::kKindCount) return -1;
  auto i = ast::field_index(static_cast<ast::Kind>(kind), view(name));
  return i ? static_cast<int32_t>(*i) : -1;
}

HtpNode *node_child_at(HtpHost *, const HtpNode *n, int32_t index) {
  if (!n || index < 0) return nullptr;
  const Node *node = to_node(n);
  if (static_cast<size_t>(index) >= node->field_count()) return nullptr;
  auto *p = std::get_if<NodePtr>(&node->field(static_cast<size_t>(index)));
  return p ? to_handle(p->get()) : nullptr;
}

size_t node_list_size(HtpHost *, const HtpNode *n, HtpStr field) {
  if (!n) return 0;
  const ast::Value *v = to_node(n)->field(view(field));
  if (!v) return 0;
  if (auto *l = std::get_if<ast::NodeList>(v)) return l->size();
  if (auto *l = std::get_if<ast::IdentList>(v)) return l->size();
  return 0;
}

HtpNode *node_list_item(HtpHost *, const HtpNode *n, HtpStr field, size_t index) {
  if (!n) return nullptr;
  const auto &list = to_node(n)->children(view(field));
  return index < list.size() ? to_handle(list[index].get()) : nullptr;
}

HtpStatus node_text(HtpHost *, const HtpNode *n, HtpStr field, size_t index, HtpStr *out) {
  if (!n || !out) return HTP_ERR_INVALID_ARGUMENT;
  const Node *node = to_node(n);
  if (index == SIZE_MAX) {
    const std::string *t = node->text(view(field));
    if (!t) return HTP_ERR_NOT_FOUND;
    *out = str(*t);
    return HTP_OK;
  }
  const ast::IdentList *l = node->idents(view(field));
  if (!l || index >= l->size()) return HTP_ERR_NOT_FOUND;
  *out = str((*l)[index]);
  return HTP_OK;
}

HtpStatus node_int(HtpHost *, const HtpNode *n, HtpStr field, int64_t *out) {
  if (!n || !out) return HTP_ERR_INVALID_ARGUMENT;
  auto v = to_node(n)->integer(view(field));
  if (!v) return HTP_ERR_NOT_FOUND;
  *out = *v;
  return HTP_OK;
}

HtpConstant to_abi(const ast::Constant &c) {
  HtpConstant o{};
  o.struct_size = sizeof o;
  std::visit(
      [&](const auto &x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, ast::NoneValue>) o.kind = HTP_CONST_NONE;
        else if constexpr (std::is_same_v<T, bool>) o.kind = HTP_CONST_BOOL, o.i = x ? 1 : 0;
        else if constexpr (std::is_same_v<T, int64_t>) o.kind = HTP_CONST_INT, o.i = x;
        else if constexpr (std::is_same_v<T, ast::BigInt>) o.kind = HTP_CONST_BIGINT, o.text = str(x.decimal);
        else if constexpr (std::is_same_v<T, ast::Float>) o.kind = HTP_CONST_FLOAT, o.real = x.value;
        else if constexpr (std::is_same_v<T, ast::Complex>) o.kind = HTP_CONST_COMPLEX, o.real = x.real, o.imag = x.imag;
        else if constexpr (std::is_same_v<T, ast::Str>) o.kind = HTP_CONST_STR, o.text = str(x.utf8);
        else if constexpr (std::is_same_v<T, ast::Bytes>) o.kind = HTP_CONST_BYTES, o.text = str(x.data);
        else o.kind = HTP_CONST_ELLIPSIS;
      },
      c);
  return o;
}

bool from_abi(const HtpConstant &c, ast::Constant &out) {
  switch (c.kind) {
  case HTP_CONST_NONE: out = ast::NoneValue{}; return true;
  case HTP_CONST_BOOL: out = c.i != 0; return true;
  case HTP_CONST_INT: out = c.i; return true;
  case HTP_CONST_BIGINT: return ast::parse_int_constant(view(c.text), out);
  case HTP_CONST_FLOAT: out = ast::Float{c.real}; return true;
  case HTP_CONST_COMPLEX: out = ast::Complex{c.real, c.imag}; return true;
  case HTP_CONST_STR: out = ast::Str{std::string(view(c.text))}; return true;
  case HTP_CONST_BYTES: out = ast::Bytes{std::string(view(c.text))}; return true;
  case HTP_CONST_ELLIPSIS: out = ast::EllipsisValue{}; return true;
  default: return false;
  }
}

HtpStatus node_constant(HtpHost *, const HtpNode *n, HtpStr field, HtpConstant *out) {
  if (!n || !out || out->struct_size < offsetof(HtpConstant, text) + sizeof(HtpStr)) return HTP_ERR_INVALID_ARGUMENT;
  const ast::Constant *c = to_node(n)->constant(view(field));
  if (!c) return HTP_ERR_NOT_FOUND;
  HtpConstant full = to_abi(*c);
  size_t size = std::min(out->struct_size, sizeof full);
  std::memcpy(static_cast<void *>(out), &full, size);
  out->struct_size = size;
  return HTP_OK;
}

HtpStatus json_out(const nlohmann::json *v, HtpStr *out) {
  if (!v) return HTP_ERR_NOT_FOUND;
  *out = keep_scratch(v->dump());
  return HTP_OK;
}

HtpStatus node_attr_get(HtpHost *, const HtpNode *n, HtpStr key, HtpStr *out) {
  if (!n || !out) return HTP_ERR_INVALID_ARGUMENT;
  const auto &attrs = to_node(n)->attrs();
  auto it = attrs.find(std::string(view(key)));
  return json_out(it == attrs.end() ? nullptr : &it->second, out);
}

/// Parses attribute JSON for `key`; reports and returns false when either is unacceptable.
bool parse_attr(HtpStr key, HtpStr json, nlohmann::json &value, HtpDiag *sink, const Node *at) {
  if (!ast::is_attribute_key(view(key))) {
    report(sink, "ast.attr-key", "attribute key '" + quoted_name(view(key)) + "' is not namespaced (ns.name)", at);
    return false;
  }
  value = nlohmann::json::parse(view(json), nullptr, false);
  if (value.is_discarded()) {
    report(sink, "ast.attr-json", "attribute '" + quoted_name(view(key)) + "' is not valid JSON", at);
    return false;
  }
  return true;
}

HtpStatus node_attr_set(HtpHost *, HtpNode *n, HtpStr key, HtpStr json, HtpDiag *sink) {
  if (!n) return HTP_ERR_INVALID_ARGUMENT;
  nlohmann::json value;
  if (!parse_attr(key, json, value, sink, to_node(n))) return HTP_ERR_INVALID_ARGUMENT;
  to_node(n)->attrs()[std::string(view(key))] = std::move(value);
  return HTP_OK;
}

// ---- mutation -------------------------------------------------------------------------------------

HtpNode *node_create(HtpHost *, HtpModule *m, HtpStr type, const HtpSpan *span) {
  if (!m) return nullptr;
  auto k = ast::kind_from_name(view(type));
  if (!k) return nullptr;
  Span s;
  if (span) s = Span{std::string(view(span->file)), span->line, span->col, span->end_line, span->end_col};
  ++m->changes;
  return m->keep(Node::make(*k, std::move(s)));
}

HtpNode *node_clone(HtpHost *, HtpModule *m, const HtpNode *n) {
  if (!m || !n) return nullptr;
  return m->keep(to_node(n)->clone());
}

/// Takes a detached node for insertion, reporting when it is not one.
NodePtr take_detached(HtpModule *m, HtpNode *child, HtpDiag *sink, const Node *at) {
  NodePtr p = m->take(child);
  if (!p)
    report(sink, "ast.not-detached",
           "node " + where(to_node(child)) + " cannot be inserted: it is still in a tree or was not created in "
           "this module (detach, clone or create it first)",
           at);
  return p;
}

/// Why `child` cannot go into field `fi` (as the node, or as a list entry), keeping ownership of it.
std::optional<std::string> misfit(const ast::FieldInfo &fi, NodePtr &child) {
  if (fi.kind == ast::FieldKind::NodeList) {
    ast::Value v{ast::NodeList{}};
    auto &list = std::get<ast::NodeList>(v);
    list.push_back(std::move(child));
    auto why = ast::check_value(fi, v);
    child = std::move(list[0]);
    return why;
  }
  ast::Value v{std::move(child)};
  auto why = ast::check_value(fi, v);
  child = std::move(std::get<NodePtr>(v));
  return why;
}

/// The field `name` of `node`, reporting when there is none.
const ast::FieldInfo *field_of(const Node *node, HtpStr name, HtpDiag *sink) {
  auto idx = ast::field_index(node->kind(), view(name));
  if (!idx) {
    report(sink, "ast.edit", where(node) + " has no field '" + quoted_name(view(name)) + "'", node);
    return nullptr;
  }
  return &node->field_info(*idx);
}

/// Checks `p` fits `fi`; on a misfit reports it, returns `p` to the module's detached set, and fails.
bool fits(HtpModule *m, const Node *node, const ast::FieldInfo &fi, NodePtr &p, HtpDiag *sink) {
  if (auto why = misfit(fi, p)) {
    report(sink, "ast.edit", where(node) + ": " + *why, node);
    m->keep(std::move(p));
    return false;
  }
  return true;
}

HtpStatus node_set_child(HtpHost *, HtpModule *m, HtpNode *n, HtpStr field, HtpNode *child, HtpDiag *sink) {
  if (!m || !n) return HTP_ERR_INVALID_ARGUMENT;
  Node *node = to_node(n);
  const ast::FieldInfo *fi = field_of(node, field, sink);
  if (!fi) return HTP_ERR_INVALID_ARGUMENT;
  ast::Value value;
  if (child) {
    NodePtr p = take_detached(m, child, sink, node);
    if (!p || !fits(m, node, *fi, p, sink)) return HTP_ERR_INVALID_ARGUMENT;
    value = std::move(p);
  }
  Node *inserted = child ? to_node(child) : nullptr;
  notify_will_edit(m);
  auto r = node->set(view(field), std::move(value));
  if (!r) return check(r, sink, node);
  notify_removed(m, *r, node);
  keep_value(m, std::move(*r));
  ++m->changes;
  notify_inserted(m, inserted);
  notify_changed(m, node);
  return HTP_OK;
}

template <class V> HtpStatus set_scalar(HtpModule *m, HtpNode *n, HtpStr field, V value, HtpDiag *sink) {
  if (!m || !n) return HTP_ERR_INVALID_ARGUMENT;
  notify_will_edit(m);
  auto r = to_node(n)->set(view(field), ast::Value(std::move(value)));
  if (!r) return check(r, sink, to_node(n));
  ++m->changes;
  notify_changed(m, to_node(n));
  return HTP_OK;
}

HtpStatus node_set_text(HtpHost *, HtpModule *m, HtpNode *n, HtpStr field, HtpStr text, HtpDiag *sink) {
  if (!ast::is_generalized_utf8(view(text))) {  // (the next reader of the field would fail, blaming itself)
    report(sink, "ast.utf8", "text for field '" + quoted_name(view(field)) + "' is not UTF-8",
           n ? to_node(n) : nullptr);
    return HTP_ERR_INVALID_ARGUMENT;
  }
  return set_scalar(m, n, field, std::string(view(text)), sink);
}

HtpStatus node_set_int(HtpHost *, HtpModule *m, HtpNode *n, HtpStr field, int64_t value, HtpDiag *sink) {
  return set_scalar(m, n, field, value, sink);
}

HtpStatus node_set_constant(HtpHost *, HtpModule *m, HtpNode *n, HtpStr field, const HtpConstant *value,
                            HtpDiag *sink) {
  if (!value) return HTP_ERR_INVALID_ARGUMENT;
  HtpConstant c{};
  if (value->struct_size < offsetof(HtpConstant, text) + sizeof(HtpStr) || value->struct_size > sizeof c) {
    report(sink, "ast.constant", "HtpConstant.struct_size " + std::to_string(value->struct_size) + " is invalid");
    return HTP_ERR_INVALID_ARGUMENT;
  }
  std::memcpy(static_cast<void *>(&c), value, value->struct_size);
  ast::Constant k;
  if (!from_abi(c, k)) {
    report(sink, "ast.constant", "invalid constant (kind " + std::to_string(c.kind) + ")", n ? to_node(n) : nullptr);
    return HTP_ERR_INVALID_ARGUMENT;
  }
  return set_scalar(m, n, field, std::move(k), sink);
}

HtpStatus node_list_insert(HtpHost *, HtpModule *m, HtpNode *n, HtpStr field, size_t index, HtpNode *child,
                           HtpDiag *sink) {
  if (!m || !n || !child) return HTP_ERR_INVALID_ARGUMENT;
  Node *node = to_node(n);
  const ast::FieldInfo *fi = field_of(node, field, sink);
  if (!fi) return HTP_ERR_INVALID_ARGUMENT;
  if (fi->kind != ast::FieldKind::NodeList || index > node->children(view(field)).size()) {
    report(sink, "ast.edit",
           where(node) + ": cannot insert at " + std::to_string(index) + " of field '" + std::string(fi->name) + "'",
           node);
    return HTP_ERR_INVALID_ARGUMENT;
  }
  NodePtr p = take_detached(m, child, sink, node);
  if (!p || !fits(m, node, *fi, p, sink)) return HTP_ERR_INVALID_ARGUMENT;
  notify_will_edit(m);
  auto r = node->insert(view(field), index, std::move(p));
  if (!r) return check(r, sink, node);
  ++m->changes;
  notify_inserted(m, to_node(child));
  notify_changed(m, node);
  return HTP_OK;
}

HtpStatus node_list_erase(HtpHost *, HtpModule *m, HtpNode *n, HtpStr field, size_t index, HtpDiag *sink) {
  if (!m || !n) return HTP_ERR_INVALID_ARGUMENT;
  notify_will_edit(m);
  auto r = to_node(n)->erase(view(field), index);
  if (!r) return check(r, sink, to_node(n));
  if (m->listener && *r) m->listener->removed(**r, *to_node(n));
  m->keep(std::move(*r));
  ++m->changes;
  notify_changed(m, to_node(n));
  return HTP_OK;
}

HtpStatus node_replace(HtpHost *, HtpModule *m, HtpNode *n, HtpNode *with, HtpDiag *sink) {
  if (!m || !n || !with) return HTP_ERR_INVALID_ARGUMENT;
  Node *node = to_node(n);
  Node *parent = node->parent();
  auto slot = node->slot();
  if (!parent || !slot) {
    report(sink, "ast.edit", where(node) + " cannot be replaced: it has no parent", node);
    return HTP_ERR_INVALID_ARGUMENT;
  }
  NodePtr p = take_detached(m, with, sink, node);
  if (!p || !fits(m, parent, parent->field_info(slot->field), p, sink)) return HTP_ERR_INVALID_ARGUMENT;
  notify_will_edit(m);
  auto r = ast::replace_node(*node, std::move(p));
  if (!r) return check(r, sink, node);
  if (m->listener && *r) m->listener->removed(**r, *parent);
  m->keep(std::move(*r));
  ++m->changes;
  notify_inserted(m, to_node(with));
  notify_changed(m, parent);
  return HTP_OK;
}

// ---- module ----------------------------------------------------------------------------------------

HtpNode *module_root(HtpHost *, HtpModule *m) { return m && m->module ? to_handle(m->module->root.get()) : nullptr; }

HtpStr module_file(HtpHost *, HtpModule *m) { return m && m->module ? str(m->module->file) : HtpStr{}; }

HtpStatus module_attr_get(HtpHost *, HtpModule *m, HtpStr key, HtpStr *out) {
  if (!m || !m->module || !out) return HTP_ERR_INVALID_ARGUMENT;
  auto it = m->module->attrs.find(std::string(view(key)));
  return json_out(it == m->module->attrs.end() ? nullptr : &it->second, out);
}

HtpStatus module_attr_set(HtpHost *, HtpModule *m, HtpStr key, HtpStr json, HtpDiag *sink) {
  if (!m || !m->module) return HTP_ERR_INVALID_ARGUMENT;
  nlohmann::json value;
  if (!parse_attr(key, json, value, sink, nullptr)) return HTP_ERR_INVALID_ARGUMENT;
  m->module->attrs[std::string(view(key))] = std::move(value);
  ++m->changes;
  return HTP_OK;
}

// ---- invocations -----------------------------------------------------------------------------------

HtpModule *pass_module(HtpHost *, HtpPassContext *ctx) { return ctx ? ctx->module : nullptr; }

HtpDiag *pass_diag(HtpHost *, HtpPassContext *ctx) { return ctx ? &ctx->diag : nullptr; }

HtpStatus pass_option(HtpHost *, HtpPassContext *ctx, HtpStr key, HtpStr *out) {
  if (!ctx || !out) return HTP_ERR_INVALID_ARGUMENT;
  auto it = ctx->options.find(std::string(view(key)));
  return json_out(it == ctx->options.end() ? nullptr : &*it, out);
}

HtpStatus pass_write_file(HtpHost *, HtpPassContext *ctx, HtpStr path, HtpStr bytes, HtpStr role, HtpDiag *sink) {
  if (!ctx) return HTP_ERR_INVALID_ARGUMENT;
  if (!ctx->writer) {
    report(sink, "package.not-writable",
           "component '" + ctx->component + "' tried to write '" + std::string(view(path)) +
               "', but only emit and package passes write package files");
    return HTP_ERR_UNSUPPORTED;
  }
  if (auto e = ctx->writer->write(view(path), view(bytes), view(role), ctx->component)) {
    if (sink && sink->list) sink->list->report(std::move(*e));
    return HTP_ERR_INVALID_ARGUMENT;
  }
  return HTP_OK;
}

HtpStatus island_run(HtpHost *, HtpPassContext *ctx, const HtpIslandStep *in, HtpStr *output) {
  if (!ctx || !in || !output || in->struct_size == 0) return HTP_ERR_INVALID_ARGUMENT;
  HtpIslandStep raw{};  // a step from an older caller reads its missing fields as zero
  std::memcpy(static_cast<void *>(&raw), in, std::min(in->struct_size, sizeof raw));
  auto text = [](HtpStr s) { return s.ptr ? std::string(s.ptr, s.len) : std::string(); };
  IslandStep step;
  step.pass = ctx->component;
  step.name = text(raw.name);
  for (size_t i = 0; raw.argv.items && i < raw.argv.count; ++i) step.argv.push_back(text(raw.argv.items[i]));
  step.input = text(raw.input);
  if (raw.input_name.len) step.input_name = text(raw.input_name);
  if (raw.output_name.len) step.output_name = text(raw.output_name);
  if (raw.timeout_ms) step.timeout = std::chrono::milliseconds(raw.timeout_ms);
  step.at = Span{text(raw.at.file), raw.at.line, raw.at.col, raw.at.end_line, raw.at.end_col};
  step.package = text(raw.package);
  const bool safe_name = !step.name.empty() && step.name.find('/') == std::string::npos && step.name != "." &&
                         step.name != "..";
  if (!safe_name) {
    ctx->diagnostics.report(Diagnostic::error("island.command", "island step name '" + step.name + "' of pass '" +
                                                                    ctx->component + "' is not a plain file name",
                                              step.at));
    return HTP_ERR_INVALID_ARGUMENT;
  }
  auto r = run_island(step, ctx->records, ctx->diagnostics);
  if (!r) return HTP_ERR;
  const std::string &kept = ctx->island_outputs.emplace_back(std::move(r->output));
  *output = HtpStr{kept.data(), kept.size()};
  return HTP_OK;
}

HtpStatus obligation_add(HtpHost *, HtpPassContext *ctx, HtpStr capability, const HtpSpan *span, HtpDiag *sink) {
  if (!ctx) return HTP_ERR_INVALID_ARGUMENT;
  if (!ctx->obligations) {
    report(sink, "scan.not-scanning", "component '" + ctx->component + "' recorded an obligation outside a scan");
    return HTP_ERR_UNSUPPORTED;
  }
  Span s;
  if (span) s = Span{std::string(view(span->file)), span->line, span->col, span->end_line, span->end_col};
  auto parsed = parse_capability(view(capability));
  if (!parsed) {
    Diagnostic d = Diagnostic::error("scan.capability", "obligation '" + std::string(view(capability)) +
                                                            "' recorded by '" + ctx->component +
                                                            "' is malformed at column " +
                                                            std::to_string(parsed.error().column + 1) + ": " +
                                                            parsed.error().reason,
                                     s);
    if (sink && sink->list) sink->list->report(std::move(d));
    return HTP_ERR_INVALID_ARGUMENT;
  }
  ctx->obligations->push_back(RaisedObligation{to_string(*parsed), std::move(s), ctx->component});
  return HTP_OK;
}

}  // namespace

void fill_ast_api(HtpHostApi &api) {
  api.ast_kind_id = &ast_kind_id;
  api.ast_kind_name = &ast_kind_name;
  api.node_kind = &node_kind;
  api.node_span = &node_span;
  api.node_parent = &node_parent;
  api.node_id = &node_id;
  api.node_field_count = &node_field_count;
  api.node_field_name = &node_field_name;
  api.node_child = &node_child;
  api.node_list_size = &node_list_size;
  api.node_list_item = &node_list_item;
  api.node_text = &node_text;
  api.node_int = &node_int;
  api.node_constant = &node_constant;
  api.node_attr_get = &node_attr_get;
  api.node_attr_set = &node_attr_set;
  api.node_create = &node_create;
  api.node_clone = &node_clone;
  api.node_set_child = &node_set_child;
  api.node_set_text = &node_set_text;
  api.node_set_int = &node_set_int;
  api.node_set_constant = &node_set_constant;
  api.node_list_insert = &node_list_insert;
  api.node_list_erase = &node_list_erase;
  api.node_replace = &node_replace;
  api.module_root = &module_root;
  api.module_file = &module_file;
  api.module_attr_get = &module_attr_get;
  api.module_attr_set = &module_attr_set;
  api.pass_module = &pass_module;
  api.pass_diag = &pass_diag;
  api.pass_option = &pass_option;
  api.pass_write_file = &pass_write_file;
  api.obligation_add = &obligation_add;
  api.ast_field_index = &ast_field_index;
  api.node_child_at = &node_child_at;
  api.island_run = &island_run;
}

}  // namespace htp
