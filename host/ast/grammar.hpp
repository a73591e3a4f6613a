// The node table of the host AST: node kinds, categories and field lists, derived from python311.def.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace htp::ast {

/// A concrete node type of Python 3.11's ast (Module, FunctionDef, BinOp, Load, arg, ...).
enum class Kind : uint8_t {
#define HTP_AST_NODE(Name, Category) Name,
#include "ast/python311.def"
};

/// An abstract category of Python 3.11's ast (mod, stmt, expr, operator, ...); `none` for non-node fields.
enum class Category : uint8_t {
#define HTP_AST_CATEGORY(Id, name, located) Id,
#include "ast/python311.def"
  none
};

/// What a field holds.
enum class FieldKind : uint8_t {
  Node,      ///< exactly one node
  OptNode,   ///< a node or null
  NodeList,  ///< a list of nodes (Dict.keys and arguments.kw_defaults also hold nulls)
  Ident,     ///< an identifier
  OptIdent,  ///< an identifier or null
  IdentList, ///< a list of identifiers
  Constant,  ///< a Python constant value (Constant.value, MatchSingleton.value)
  Int,       ///< an integer
  OptInt,    ///< an integer or null
  String,    ///< a string
  OptString, ///< a string or null
};

/// One field of a node type.
struct FieldInfo {
  std::string_view name;
  FieldKind kind;
  Category category; ///< The category of the nodes it holds; Category::none for non-node kinds.
};

/// One node type.
struct KindInfo {
  Kind kind;
  std::string_view name;
  Category category;
  bool located; ///< Carries lineno/col_offset/end_lineno/end_col_offset (a span).
  std::span<const FieldInfo> fields;
};

/// Number of node kinds.
inline constexpr size_t kKindCount = 0
#define HTP_AST_NODE(Name, Category) +1
#include "ast/python311.def"
    ;

/// The table entry of `kind`.
const KindInfo &kind_info(Kind kind);

/// The Python type name of `kind` ("BinOp").
std::string_view kind_name(Kind kind);

/// The kind whose Python type name is `name`, or nothing.
std::optional<Kind> kind_from_name(std::string_view name);

/// The ASDL name of `category` ("operator"; "none" for Category::none).
std::string_view category_name(Category category);

/// Whether nodes of `category` carry location attributes.
bool category_located(Category category);

/// A readable name of a field kind: "node", "optional node", "node list", "identifier", ...
std::string_view field_kind_name(FieldKind kind);

/// Whether `kind` holds nodes (Node, OptNode, NodeList).
constexpr bool holds_nodes(FieldKind kind) {
  return kind == FieldKind::Node || kind == FieldKind::OptNode || kind == FieldKind::NodeList;
}

/// Whether `kind` accepts null (OptNode, OptIdent, OptInt, OptString).
constexpr bool is_optional(FieldKind kind) {
  return kind == FieldKind::OptNode || kind == FieldKind::OptIdent || kind == FieldKind::OptInt ||
         kind == FieldKind::OptString;
}

/// The index of field `name` of `kind`, or nothing.
std::optional<size_t> field_index(Kind kind, std::string_view name);

} // namespace htp::ast
