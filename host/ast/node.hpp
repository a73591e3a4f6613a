// One node of the host AST: a kind from the grammar, its fields in grammar order, a span, metadata.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "ast/constant.hpp"
#include "ast/grammar.hpp"
#include "diag/diagnostic.hpp"

namespace htp::ast {

class Node;
using NodePtr = std::unique_ptr<Node>;
/// The nodes of a NodeList field; an entry may be null (Dict.keys, arguments.kw_defaults).
using NodeList = std::vector<NodePtr>;
using IdentList = std::vector<std::string>;

/// The value of one field: null (std::monostate), a node, a node list, an identifier or string, an
/// identifier list, a constant or an int. Which alternative a field may hold follows its FieldKind.
using Value = std::variant<std::monostate, NodePtr, NodeList, std::string, IdentList, Constant, int64_t>;

/// Namespaced metadata: keys like "wsp.axis" or "layout.dist", each a JSON value.
using Attributes = std::map<std::string, nlohmann::json>;

/// Whether `key` is namespaced: `<namespace>.<name>`, both parts non-empty ("wsp.axis").
bool is_attribute_key(std::string_view key);

/// Where a node sits in its parent: a field, and the position in it when the field is a list.
struct Slot {
  size_t field = 0;
  std::optional<size_t> index;
  friend bool operator==(const Slot &, const Slot &) = default;
};

class Node {
public:
  /// A new node of `kind` whose fields hold their empty values: null, [], "", None or 0.
  static NodePtr make(Kind kind, Span span = {});

  Node(const Node &) = delete;
  Node &operator=(const Node &) = delete;
  ~Node();
  /// A node and its fields are one allocation (see fields_); deleting a node frees both.
  static void operator delete(void *p) { ::operator delete(p); }

  /// The node type.
  Kind kind() const { return kind_; }
  /// The node type's table entry: name, category, location, fields.
  const KindInfo &info() const { return kind_info(kind_); }
  /// The Python type name ("BinOp").
  std::string_view type_name() const { return info().name; }
  /// The node whose field holds this node, or nullptr for a root.
  Node *parent() const { return parent_; }
  /// Where this node sits in its parent; nothing for a root.
  std::optional<Slot> slot() const;

  /// The source range; unknown (line 0) for kinds without location and for synthesised nodes.
  const Span &span() const { return span_; }
  /// Replaces the source range (kept for every kind; written to JSON only for located kinds).
  void set_span(Span span) { span_ = std::move(span); }

  /// Metadata attributes of this node.
  Attributes &attrs() { return attrs_; }
  const Attributes &attrs() const { return attrs_; }

  /// The number of fields of this kind (its grammar's field list).
  size_t field_count() const { return field_count_; }
  /// The grammar entry of field `index` (< field_count()).
  const FieldInfo &field_info(size_t index) const { return info().fields[index]; }
  /// The value of field `index` (< field_count()).
  const Value &field(size_t index) const { return fields_[index]; }
  /// The value of field `name`, or nullptr when this kind has no such field.
  const Value *field(std::string_view name) const;

  /// The node in field `name`, or nullptr when the field is null, absent or not a node field.
  Node *child(std::string_view name) const;
  /// The list in field `name`; an empty list when the field is absent or not a node list.
  const NodeList &children(std::string_view name) const;
  /// The identifier or string in field `name`, or nullptr when null or absent.
  const std::string *text(std::string_view name) const;
  /// The identifier list in field `name`, or nullptr when absent.
  const IdentList *idents(std::string_view name) const;
  /// The constant in field `name`, or nullptr when absent.
  const Constant *constant(std::string_view name) const;
  /// The int in field `name`, or nothing when null or absent.
  std::optional<int64_t> integer(std::string_view name) const;

  /// Stores `value` in field `name` and returns the previous value (its nodes detached); an error when
  /// the kind has no such field or the value does not fit the field's kind and category. Null is
  /// accepted in every node field so trees can be built step by step; validate() finds what is left null.
  Expected<Value> set(std::string_view name, Value value);
  /// As set(name, value), by field index.
  Expected<Value> set(size_t index, Value value);
  /// Stores `value` in field `index` without checking it against the grammar (the caller has);
  /// still makes this node the parent of the nodes in it.
  void set_unchecked(size_t index, Value value);

  /// Inserts `node` at `index` (== size appends) of list field `name`; returns the inserted node.
  Expected<Node *> insert(std::string_view name, size_t index, NodePtr node);
  /// Removes and returns entry `index` of list field `name`.
  Expected<NodePtr> erase(std::string_view name, size_t index);
  /// Puts `node` at entry `index` of list field `name` and returns the entry it replaced.
  Expected<NodePtr> replace(std::string_view name, size_t index, NodePtr node);

  /// A deep copy of this node and everything below it (spans and attributes included), without parent.
  NodePtr clone() const;

private:
  explicit Node(Kind kind) : kind_(kind) {}
  /// How many values follow a node in its allocation.
  struct FieldCount {
    size_t n;
  };
  /// Room for a node and `fields.n` values right after it; the counterpart frees it if the constructor throws.
  static void *operator new(size_t size, FieldCount fields);
  static void operator delete(void *p, FieldCount fields);
  /// A node of `kind` in one allocation with its fields, which hold their empty values.
  static NodePtr allocate(Kind kind);
  Expected<size_t> list_field(std::string_view name, const char *operation) const;
  void adopt(Value &value);

  Kind kind_;
  uint32_t field_count_ = 0;
  Node *parent_ = nullptr;
  /// The fields, in the same allocation right after the node: their number is fixed by the kind, and a
  /// walk reads a node's kind and fields from one place (in two allocations it waited on two cache misses
  /// per node).
  Value *fields_ = nullptr;
  Span span_;
  Attributes attrs_;
};

/// Takes `node` out of its parent and returns it: a list entry is erased, a field becomes null.
/// An error when `node` has no parent.
Expected<NodePtr> detach(Node &node);

/// Puts `with` where `node` sits in its parent and returns `node`; an error when `node` has no parent or
/// `with` does not fit that field.
Expected<NodePtr> replace_node(Node &node, NodePtr with);

/// Whether `value` may be stored in a field described by `field`; the reason when it may not.
std::optional<std::string> check_value(const FieldInfo &field, const Value &value);

/// Whether two trees are equal: kinds and fields recursively, and spans and attributes too when
/// `compare_locations` (as ast.dump(include_attributes=True) compares).
bool equal(const Node &a, const Node &b, bool compare_locations = true);

/// The first problem that makes `root` an invalid Python AST (a required field left null), as a
/// diagnostic naming the node's stable id; nothing when the tree is complete.
std::optional<Diagnostic> validate(const Node &root);

} // namespace htp::ast
