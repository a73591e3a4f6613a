#include "ast/grammar.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <unordered_map>

namespace htp::ast {
namespace {

struct FieldRow {
  Kind owner;
  FieldInfo info;
};

constexpr FieldRow kFieldRows[] = {
#define HTP_AST_FIELD(Name, field, Kind_, Category_)                                                         \
  {Kind::Name, {#field, FieldKind::Kind_, Category::Category_}},
#include "ast/python311.def"
};

constexpr size_t kFieldCount = std::size(kFieldRows);

// All fields in one array; a node type's fields are the contiguous run of rows that name it.
constexpr std::array<FieldInfo, kFieldCount> kFields = [] {
  std::array<FieldInfo, kFieldCount> out{};
  for (size_t i = 0; i < kFieldCount; ++i)
    out[i] = kFieldRows[i].info;
  return out;
}();

struct CategoryRow {
  std::string_view name;
  bool located;
};

constexpr CategoryRow kCategories[] = {
#define HTP_AST_CATEGORY(Id, name, located) {name, located},
#include "ast/python311.def"
    {"none", false},
};

constexpr std::array<KindInfo, kKindCount> kKinds = [] {
  struct Row {
    Kind kind;
    std::string_view name;
    Category category;
  };
  constexpr Row rows[] = {
#define HTP_AST_NODE(Name, Category_) {Kind::Name, #Name, Category::Category_},
#include "ast/python311.def"
  };
  std::array<KindInfo, kKindCount> out{};
  for (size_t k = 0; k < kKindCount; ++k) {
    size_t begin = 0;
    while (begin < kFieldCount && kFieldRows[begin].owner != rows[k].kind)
      ++begin;
    size_t end = begin;
    while (end < kFieldCount && kFieldRows[end].owner == rows[k].kind)
      ++end;
    out[k] = KindInfo{rows[k].kind, rows[k].name, rows[k].category,
                      kCategories[static_cast<size_t>(rows[k].category)].located,
                      std::span<const FieldInfo>(kFields.data() + begin, end - begin)};
  }
  return out;
}();

// Every row of a node type must follow its node directly, so that the runs above are complete.
constexpr bool fields_are_contiguous() {
  for (size_t i = 1; i < kFieldCount; ++i)
    for (size_t j = 0; j + 1 < i; ++j)
      if (kFieldRows[j].owner == kFieldRows[i].owner && kFieldRows[i - 1].owner != kFieldRows[i].owner)
        return false;
  return true;
}
static_assert(fields_are_contiguous(), "python311.def: the fields of a node type must be listed together");

} // namespace

const KindInfo &kind_info(Kind kind) {
  return kKinds[static_cast<size_t>(kind)];
}

std::string_view kind_name(Kind kind) {
  return kind_info(kind).name;
}

std::optional<Kind> kind_from_name(std::string_view name) {
  static const std::unordered_map<std::string_view, Kind> by_name = [] {
    std::unordered_map<std::string_view, Kind> m;
    for (const auto &k : kKinds)
      m.emplace(k.name, k.kind);
    return m;
  }();
  auto it = by_name.find(name);
  if (it == by_name.end()) return std::nullopt;
  return it->second;
}

std::string_view category_name(Category category) {
  return kCategories[static_cast<size_t>(category)].name;
}

bool category_located(Category category) {
  return kCategories[static_cast<size_t>(category)].located;
}

std::string_view field_kind_name(FieldKind kind) {
  switch (kind) {
  case FieldKind::Node: return "node";
  case FieldKind::OptNode: return "optional node";
  case FieldKind::NodeList: return "node list";
  case FieldKind::Ident: return "identifier";
  case FieldKind::OptIdent: return "optional identifier";
  case FieldKind::IdentList: return "identifier list";
  case FieldKind::Constant: return "constant";
  case FieldKind::Int: return "int";
  case FieldKind::OptInt: return "optional int";
  case FieldKind::String: return "string";
  case FieldKind::OptString: return "optional string";
  }
  return "?";
}

std::optional<size_t> field_index(Kind kind, std::string_view name) {
  const auto &fields = kind_info(kind).fields;
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name == name) return i;
  return std::nullopt;
}

} // namespace htp::ast
