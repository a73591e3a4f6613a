#include "ast/node.hpp"

#include "ast/stable_id.hpp"
#include "ast/walk.hpp"

namespace htp::ast {
namespace {

Value empty_value(FieldKind kind) {
  switch (kind) {
  case FieldKind::Node:
  case FieldKind::OptNode:
  case FieldKind::OptIdent:
  case FieldKind::OptInt:
  case FieldKind::OptString: return std::monostate{};
  case FieldKind::NodeList: return NodeList{};
  case FieldKind::Ident:
  case FieldKind::String: return std::string{};
  case FieldKind::IdentList: return IdentList{};
  case FieldKind::Constant: return Constant{NoneValue{}};
  case FieldKind::Int: return int64_t{0};
  }
  return std::monostate{};
}

const char *value_name(const Value &v) {
  static const char *const names[] = {"null",          "a node",     "a node list", "a string",
                                      "a string list", "a constant", "an int"};
  return names[v.index()];
}

std::optional<std::string> check_child(const FieldInfo &field, const Node *child) {
  if (!child) return std::nullopt;
  if (child->info().category == field.category) return std::nullopt;
  return "field '" + std::string(field.name) + "' holds " + std::string(category_name(field.category)) +
         " nodes, not " + std::string(child->type_name()) + " (" +
         std::string(category_name(child->info().category)) + ")";
}

Diagnostic edit_error(const Node &node, std::string message) {
  return Diagnostic::error("ast.edit", std::string(node.type_name()) + ": " + message, node.span());
}

} // namespace

bool is_attribute_key(std::string_view key) {
  size_t dot = key.find('.');
  return dot != std::string_view::npos && dot > 0 && dot + 1 < key.size();
}

void *Node::operator new(size_t size, FieldCount fields) {
  static_assert(sizeof(Node) % alignof(Value) == 0, "the fields follow the node");
  return ::operator new(size + fields.n * sizeof(Value));
}

void Node::operator delete(void *p, FieldCount) { ::operator delete(p); }

NodePtr Node::allocate(Kind kind) {
  const auto &fields = kind_info(kind).fields;
  NodePtr n(new (FieldCount{fields.size()}) Node(kind));
  n->fields_ = reinterpret_cast<Value *>(reinterpret_cast<unsigned char *>(n.get()) + sizeof(Node));
  for (const auto &f : fields) { // field_count_ counts the values constructed, which ~Node destroys
    new (n->fields_ + n->field_count_) Value(empty_value(f.kind));
    ++n->field_count_;
  }
  return n;
}

Node::~Node() {
  for (uint32_t i = field_count_; i-- > 0;)
    fields_[i].~Value();
}

NodePtr Node::make(Kind kind, Span span) {
  NodePtr n = allocate(kind);
  n->span_ = std::move(span);
  return n;
}

std::optional<Slot> Node::slot() const {
  if (!parent_) return std::nullopt;
  for (size_t f = 0; f < parent_->field_count_; ++f) {
    const Value &v = parent_->fields_[f];
    if (auto *child = std::get_if<NodePtr>(&v)) {
      if (child->get() == this) return Slot{f, std::nullopt};
    } else if (auto *list = std::get_if<NodeList>(&v)) {
      for (size_t i = 0; i < list->size(); ++i)
        if ((*list)[i].get() == this) return Slot{f, i};
    }
  }
  return std::nullopt;
}

const Value *Node::field(std::string_view name) const {
  auto index = field_index(kind_, name);
  return index ? &fields_[*index] : nullptr;
}

Node *Node::child(std::string_view name) const {
  const Value *v = field(name);
  auto *p = v ? std::get_if<NodePtr>(v) : nullptr;
  return p ? p->get() : nullptr;
}

const NodeList &Node::children(std::string_view name) const {
  static const NodeList empty;
  const Value *v = field(name);
  auto *p = v ? std::get_if<NodeList>(v) : nullptr;
  return p ? *p : empty;
}

const std::string *Node::text(std::string_view name) const {
  const Value *v = field(name);
  return v ? std::get_if<std::string>(v) : nullptr;
}

const IdentList *Node::idents(std::string_view name) const {
  const Value *v = field(name);
  return v ? std::get_if<IdentList>(v) : nullptr;
}

const Constant *Node::constant(std::string_view name) const {
  const Value *v = field(name);
  return v ? std::get_if<Constant>(v) : nullptr;
}

std::optional<int64_t> Node::integer(std::string_view name) const {
  const Value *v = field(name);
  auto *p = v ? std::get_if<int64_t>(v) : nullptr;
  return p ? std::optional<int64_t>(*p) : std::nullopt;
}

std::optional<std::string> check_value(const FieldInfo &field, const Value &value) {
  auto wrong = [&] {
    return std::optional<std::string>("field '" + std::string(field.name) + "' holds " +
                                      std::string(field_kind_name(field.kind)) + ", not " +
                                      value_name(value));
  };
  if (std::holds_alternative<std::monostate>(value))
    return (holds_nodes(field.kind) && field.kind != FieldKind::NodeList) || is_optional(field.kind)
               ? std::nullopt
               : wrong();
  switch (field.kind) {
  case FieldKind::Node:
  case FieldKind::OptNode: {
    auto *n = std::get_if<NodePtr>(&value);
    if (!n || !*n) return wrong();
    return check_child(field, n->get());
  }
  case FieldKind::NodeList: {
    auto *list = std::get_if<NodeList>(&value);
    if (!list) return wrong();
    for (const auto &n : *list)
      if (auto problem = check_child(field, n.get())) return problem;
    return std::nullopt;
  }
  case FieldKind::Ident:
  case FieldKind::OptIdent:
  case FieldKind::String:
  case FieldKind::OptString: return std::holds_alternative<std::string>(value) ? std::nullopt : wrong();
  case FieldKind::IdentList: return std::holds_alternative<IdentList>(value) ? std::nullopt : wrong();
  case FieldKind::Constant: return std::holds_alternative<Constant>(value) ? std::nullopt : wrong();
  case FieldKind::Int:
  case FieldKind::OptInt: return std::holds_alternative<int64_t>(value) ? std::nullopt : wrong();
  }
  return wrong();
}

void Node::adopt(Value &value) {
  if (auto *n = std::get_if<NodePtr>(&value)) {
    if (*n)
      (*n)->parent_ = this;
    else
      value = std::monostate{};
  } else if (auto *list = std::get_if<NodeList>(&value)) {
    for (auto &c : *list)
      if (c) c->parent_ = this;
  }
}

void Node::set_unchecked(size_t index, Value value) {
  adopt(value);
  fields_[index] = std::move(value);
}

Expected<Value> Node::set(size_t index, Value value) {
  if (index >= field_count_) return edit_error(*this, "has no field #" + std::to_string(index));
  if (auto problem = check_value(info().fields[index], value)) return edit_error(*this, *problem);
  adopt(value);
  Value old = std::exchange(fields_[index], std::move(value));
  if (auto *n = std::get_if<NodePtr>(&old)) (*n)->parent_ = nullptr;
  if (auto *list = std::get_if<NodeList>(&old))
    for (auto &c : *list)
      if (c) c->parent_ = nullptr;
  return old;
}

Expected<Value> Node::set(std::string_view name, Value value) {
  auto index = field_index(kind_, name);
  if (!index) return edit_error(*this, "has no field '" + std::string(name) + "'");
  return set(*index, std::move(value));
}

Expected<size_t> Node::list_field(std::string_view name, const char *operation) const {
  auto index = field_index(kind_, name);
  if (!index) return edit_error(*this, "has no field '" + std::string(name) + "'");
  if (info().fields[*index].kind != FieldKind::NodeList)
    return edit_error(*this, std::string("cannot ") + operation + " in field '" + std::string(name) +
                                 "', which holds " +
                                 std::string(field_kind_name(info().fields[*index].kind)));
  return *index;
}

Expected<Node *> Node::insert(std::string_view name, size_t index, NodePtr node) {
  auto f = list_field(name, "insert");
  if (!f) return f.error();
  auto &list = std::get<NodeList>(fields_[*f]);
  if (index > list.size())
    return edit_error(*this, "cannot insert at " + std::to_string(index) + " in '" + std::string(name) +
                                 "' of size " + std::to_string(list.size()));
  if (auto problem = check_child(info().fields[*f], node.get())) return edit_error(*this, *problem);
  Node *raw = node.get();
  if (raw) raw->parent_ = this;
  list.insert(list.begin() + static_cast<std::ptrdiff_t>(index), std::move(node));
  return raw;
}

Expected<NodePtr> Node::erase(std::string_view name, size_t index) {
  auto f = list_field(name, "erase");
  if (!f) return f.error();
  auto &list = std::get<NodeList>(fields_[*f]);
  if (index >= list.size())
    return edit_error(*this, "cannot erase entry " + std::to_string(index) + " of '" + std::string(name) +
                                 "' of size " + std::to_string(list.size()));
  NodePtr old = std::move(list[index]);
  list.erase(list.begin() + static_cast<std::ptrdiff_t>(index));
  if (old) old->parent_ = nullptr;
  return old;
}

Expected<NodePtr> Node::replace(std::string_view name, size_t index, NodePtr node) {
  auto f = list_field(name, "replace");
  if (!f) return f.error();
  auto &list = std::get<NodeList>(fields_[*f]);
  if (index >= list.size())
    return edit_error(*this, "cannot replace entry " + std::to_string(index) + " of '" + std::string(name) +
                                 "' of size " + std::to_string(list.size()));
  if (auto problem = check_child(info().fields[*f], node.get())) return edit_error(*this, *problem);
  if (node) node->parent_ = this;
  NodePtr old = std::exchange(list[index], std::move(node));
  if (old) old->parent_ = nullptr;
  return old;
}

static Value clone_value(const Value &v) {
  struct Cloner {
    Value operator()(const std::monostate &) const { return std::monostate{}; }
    Value operator()(const NodePtr &n) const { return n ? Value(n->clone()) : Value(std::monostate{}); }
    Value operator()(const NodeList &list) const {
      NodeList out;
      out.reserve(list.size());
      for (const auto &n : list)
        out.push_back(n ? n->clone() : nullptr);
      return out;
    }
    Value operator()(const std::string &s) const { return s; }
    Value operator()(const IdentList &l) const { return l; }
    Value operator()(const Constant &c) const { return c; }
    Value operator()(int64_t i) const { return i; }
  };
  return std::visit(Cloner{}, v);
}

NodePtr Node::clone() const {
  NodePtr n = allocate(kind_);
  n->span_ = span_;
  n->attrs_ = attrs_;
  for (uint32_t i = 0; i < field_count_; ++i) {
    n->fields_[i] = clone_value(fields_[i]);
    n->adopt(n->fields_[i]);
  }
  return n;
}

Expected<NodePtr> detach(Node &node) {
  Node *parent = node.parent();
  auto slot = node.slot();
  if (!parent || !slot) return edit_error(node, "cannot detach a node that has no parent");
  const auto &field = parent->field_info(slot->field);
  if (slot->index) return parent->erase(field.name, *slot->index);
  auto old = parent->set(slot->field, std::monostate{});
  if (!old) return old.error();
  return std::move(std::get<NodePtr>(*old));
}

Expected<NodePtr> replace_node(Node &node, NodePtr with) {
  Node *parent = node.parent();
  auto slot = node.slot();
  if (!parent || !slot) return edit_error(node, "cannot replace a node that has no parent");
  const auto &field = parent->field_info(slot->field);
  if (slot->index) return parent->replace(field.name, *slot->index, std::move(with));
  auto old = parent->set(slot->field, Value(std::move(with)));
  if (!old) return old.error();
  return std::move(std::get<NodePtr>(*old));
}

static bool equal_values(const Value &a, const Value &b, bool compare_locations) {
  if (a.index() != b.index()) return false;
  if (auto *na = std::get_if<NodePtr>(&a)) return equal(**na, *std::get<NodePtr>(b), compare_locations);
  if (auto *la = std::get_if<NodeList>(&a)) {
    const auto &lb = std::get<NodeList>(b);
    if (la->size() != lb.size()) return false;
    for (size_t i = 0; i < la->size(); ++i) {
      if (!(*la)[i] || !lb[i]) {
        if ((*la)[i] || lb[i]) return false;
      } else if (!equal(*(*la)[i], *lb[i], compare_locations)) {
        return false;
      }
    }
    return true;
  }
  return a == b;
}

bool equal(const Node &a, const Node &b, bool compare_locations) {
  if (a.kind() != b.kind()) return false;
  if (compare_locations && (a.span() != b.span() || a.attrs() != b.attrs())) return false;
  for (size_t f = 0; f < a.field_count(); ++f)
    if (!equal_values(a.field(f), b.field(f), compare_locations)) return false;
  return true;
}

std::optional<Diagnostic> validate(const Node &root) {
  std::optional<Diagnostic> problem;
  walk(root, [&](const Node &n) {
    if (problem) return false;
    for (size_t f = 0; f < n.field_count(); ++f) {
      const FieldInfo &info = n.field_info(f);
      if (info.kind == FieldKind::Node && std::holds_alternative<std::monostate>(n.field(f))) {
        problem = Diagnostic::error("ast.invalid",
                                    stable_id(n) + ": required field '" + std::string(info.name) + "' of " +
                                        std::string(n.type_name()) + " is null",
                                    n.span());
        return false;
      }
    }
    return true;
  });
  return problem;
}

} // namespace htp::ast
