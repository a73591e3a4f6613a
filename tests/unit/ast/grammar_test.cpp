// The node table derived from python311.def.
#include <gtest/gtest.h>

#include "ast/grammar.hpp"

namespace htp::ast {
namespace {

TEST(AstGrammar, HasEveryConcreteNodeTypeOfPython311) {
  // 107 = the classes of Python 3.11's _ast minus AST and its 11 abstract categories.
  EXPECT_EQ(kKindCount, 107u);
}

TEST(AstGrammar, NamesMapToKindsAndBack) {
  for (size_t k = 0; k < kKindCount; ++k) {
    Kind kind = static_cast<Kind>(k);
    EXPECT_EQ(kind_from_name(kind_name(kind)), kind) << kind_name(kind);
    EXPECT_EQ(kind_info(kind).kind, kind);
  }
  EXPECT_FALSE(kind_from_name("Num").has_value());
  EXPECT_FALSE(kind_from_name("expr").has_value()) << "categories are not node types";
}

TEST(AstGrammar, FieldsFollowAsdlOrderWithTheirKinds) {
  const KindInfo &f = kind_info(Kind::FunctionDef);
  ASSERT_EQ(f.fields.size(), 6u);
  const char *names[] = {"name", "args", "body", "decorator_list", "returns", "type_comment"};
  FieldKind kinds[] = {FieldKind::Ident,    FieldKind::Node,    FieldKind::NodeList,
                       FieldKind::NodeList, FieldKind::OptNode, FieldKind::OptString};
  Category cats[] = {Category::none, Category::arguments, Category::stmt,
                     Category::expr, Category::expr,      Category::none};
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(f.fields[i].name, names[i]);
    EXPECT_EQ(f.fields[i].kind, kinds[i]) << names[i];
    EXPECT_EQ(f.fields[i].category, cats[i]) << names[i];
  }
  EXPECT_EQ(f.category, Category::stmt);
  EXPECT_EQ(kind_info(Kind::Constant).fields[0].kind, FieldKind::Constant);
  EXPECT_EQ(kind_info(Kind::ImportFrom).fields[2].kind, FieldKind::OptInt);
  EXPECT_EQ(kind_info(Kind::Global).fields[0].kind, FieldKind::IdentList);
  EXPECT_EQ(kind_info(Kind::TypeIgnore).fields[1].kind, FieldKind::String);
  EXPECT_TRUE(kind_info(Kind::Load).fields.empty());
}

TEST(AstGrammar, LocatedCategoriesCarrySpans) {
  for (Category c : {Category::stmt, Category::expr, Category::excepthandler, Category::arg,
                     Category::keyword, Category::alias, Category::pattern})
    EXPECT_TRUE(category_located(c)) << category_name(c);
  for (Category c : {Category::mod, Category::expr_context, Category::operator_, Category::comprehension,
                     Category::arguments, Category::withitem, Category::match_case, Category::type_ignore})
    EXPECT_FALSE(category_located(c)) << category_name(c);
  EXPECT_TRUE(kind_info(Kind::BinOp).located);
  EXPECT_FALSE(kind_info(Kind::Module).located);
  EXPECT_EQ(category_name(Category::operator_), "operator");
}

TEST(AstGrammar, ExactlyTheNodeFieldsNameACategory) {
  for (size_t k = 0; k < kKindCount; ++k)
    for (const auto &f : kind_info(static_cast<Kind>(k)).fields)
      EXPECT_EQ(holds_nodes(f.kind), f.category != Category::none)
          << kind_name(static_cast<Kind>(k)) << "." << f.name;
}

TEST(AstGrammar, FieldIndexFindsFieldsByName) {
  EXPECT_EQ(field_index(Kind::BinOp, "right"), 2u);
  EXPECT_FALSE(field_index(Kind::BinOp, "middle").has_value());
}

} // namespace
} // namespace htp::ast
