// Nodes: typed fields checked against the grammar, parent links, edits, clone, walk, validation.
#include <gtest/gtest.h>

#include "ast/node.hpp"
#include "ast/walk.hpp"
#include "tree_builder.hpp"

namespace htp::ast {
namespace {

using namespace test;

TEST(AstNode, MakeGivesEveryFieldItsEmptyValue) {
  NodePtr n = Node::make(Kind::FunctionDef);
  EXPECT_EQ(n->type_name(), "FunctionDef");
  EXPECT_EQ(*n->text("name"), "");
  EXPECT_EQ(n->child("args"), nullptr);
  EXPECT_TRUE(n->children("body").empty());
  EXPECT_EQ(n->text("type_comment"), nullptr);
  NodePtr c = Node::make(Kind::Constant);
  EXPECT_TRUE(std::holds_alternative<NoneValue>(*c->constant("value")));
  EXPECT_EQ(Node::make(Kind::comprehension)->integer("is_async"), 0);
}

TEST(AstNode, SetRejectsAValueOfTheWrongKind) {
  NodePtr n = Node::make(Kind::BinOp);
  auto r = n->set("left", std::string("x"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "BinOp: field 'left' holds node, not a string");
}

TEST(AstNode, SetRejectsANodeOfTheWrongCategory) {
  NodePtr n = Node::make(Kind::BinOp);
  auto r = n->set("op", Value(Node::make(Kind::Load)));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "BinOp: field 'op' holds operator nodes, not Load (expr_context)");
}

TEST(AstNode, SetRejectsUnknownFields) {
  auto r = Node::make(Kind::Name)->set("value", std::string("x"));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "Name: has no field 'value'");
}

TEST(AstNode, SetLinksTheNewChildAndDetachesTheOld) {
  NodePtr e = expr_stmt(name("a"));
  Node *a = e->child("value");
  EXPECT_EQ(a->parent(), e.get());
  auto old = e->set("value", Value(name("b").take()));
  ASSERT_TRUE(old.ok());
  NodePtr &detached = std::get<NodePtr>(*old);
  EXPECT_EQ(detached.get(), a);
  EXPECT_EQ(a->parent(), nullptr);
  EXPECT_EQ(*e->child("value")->text("id"), "b");
  EXPECT_EQ(e->child("value")->parent(), e.get());
}

TEST(AstNode, OptionalFieldsAcceptNull) {
  NodePtr r = ret(name("x"));
  EXPECT_TRUE(r->set("value", std::monostate{}).ok());
  EXPECT_EQ(r->child("value"), nullptr);
  NodePtr a = B(Kind::alias).f("name", std::string("os"));
  EXPECT_TRUE(a->set("asname", std::monostate{}).ok());
  EXPECT_FALSE(a->set("name", std::monostate{}).ok()) << "an identifier is never null";
}

TEST(AstNode, InsertEraseAndReplaceKeepParentLinks) {
  NodePtr m = module(list(expr_stmt(name("a")), expr_stmt(name("c"))));
  auto inserted = m->insert("body", 1, expr_stmt(name("b")));
  ASSERT_TRUE(inserted.ok());
  EXPECT_EQ((*inserted)->parent(), m.get());
  ASSERT_EQ(m->children("body").size(), 3u);
  EXPECT_EQ(*m->children("body")[1]->child("value")->text("id"), "b");

  auto replaced = m->replace("body", 0, B(Kind::Pass));
  ASSERT_TRUE(replaced.ok());
  EXPECT_EQ((*replaced)->kind(), Kind::Expr);
  EXPECT_EQ((*replaced)->parent(), nullptr);
  EXPECT_EQ(m->children("body")[0]->kind(), Kind::Pass);

  auto erased = m->erase("body", 2);
  ASSERT_TRUE(erased.ok());
  EXPECT_EQ((*erased)->parent(), nullptr);
  EXPECT_EQ(m->children("body").size(), 2u);
}

TEST(AstNode, ListEditsAreChecked) {
  NodePtr m = module(list(B(Kind::Pass)));
  EXPECT_EQ(m->insert("body", 5, B(Kind::Pass)).error().message,
            "Module: cannot insert at 5 in 'body' of size 1");
  EXPECT_EQ(m->erase("body", 1).error().message, "Module: cannot erase entry 1 of 'body' of size 1");
  EXPECT_EQ(m->insert("body", 0, name("x")).error().message,
            "Module: field 'body' holds stmt nodes, not Name (expr)");
  NodePtr e = expr_stmt(name("x"));
  EXPECT_EQ(e->insert("value", 0, B(Kind::Pass)).error().message,
            "Expr: cannot insert in field 'value', which holds node");
}

TEST(AstNode, SlotNamesTheFieldAndIndex) {
  NodePtr m = module(list(B(Kind::Pass), expr_stmt(name("a"))));
  Node *stmt = m->children("body")[1].get();
  EXPECT_EQ(stmt->slot(), (Slot{0, 1}));
  EXPECT_EQ(stmt->child("value")->slot(), (Slot{0, std::nullopt}));
  EXPECT_FALSE(m->slot().has_value());
}

TEST(AstNode, CloneIsDeepAndIndependent) {
  NodePtr m = module(list(expr_stmt(bin(name("a"), Kind::Add, num(1)).at(1, 0, 1, 5))));
  m->children("body")[0]->attrs()["wsp.axis"] = nlohmann::json{{"name", "b"}};
  NodePtr copy = m->clone();
  EXPECT_TRUE(equal(*m, *copy));
  EXPECT_EQ(copy->parent(), nullptr);
  EXPECT_EQ(copy->children("body")[0]->parent(), copy.get());
  ASSERT_TRUE(copy->children("body")[0]->child("value")->set("right", Value(num(2).take())).ok());
  EXPECT_FALSE(equal(*m, *copy));
  EXPECT_EQ(std::get<int64_t>(*m->children("body")[0]->child("value")->child("right")->constant("value")), 1);
  EXPECT_EQ(copy->children("body")[0]->attrs().at("wsp.axis")["name"], "b");
}

TEST(AstNode, DetachAndReplaceNodeWorkWhereverTheNodeSits) {
  NodePtr m = module(list(expr_stmt(name("a")), expr_stmt(name("b"))));
  Node *first = m->children("body")[0].get();
  auto gone = detach(*first);
  ASSERT_TRUE(gone.ok());
  EXPECT_EQ(gone->get(), first);
  EXPECT_EQ(m->children("body").size(), 1u);

  Node *b = m->children("body")[0]->child("value");
  auto old = replace_node(*b, name("c"));
  ASSERT_TRUE(old.ok());
  EXPECT_EQ(*m->children("body")[0]->child("value")->text("id"), "c");
  EXPECT_FALSE(detach(*m).ok()) << "a root has no parent";
}

TEST(AstWalk, VisitsPreOrderInFieldOrder) {
  NodePtr t = bin(name("a"), Kind::Add, unary(Kind::USub, name("b")));
  std::vector<std::string> seen;
  walk(*t, [&](const Node &n) { seen.emplace_back(n.type_name()); });
  EXPECT_EQ(seen,
            (std::vector<std::string>{"BinOp", "Name", "Load", "Add", "UnaryOp", "USub", "Name", "Load"}));
}

TEST(AstWalk, ReturningFalseSkipsChildren) {
  NodePtr t = bin(name("a"), Kind::Add, name("b"));
  size_t visited = 0;
  walk(*t, [&](Node &n) {
    ++visited;
    return n.kind() != Kind::Name;
  });
  EXPECT_EQ(visited, 4u); // BinOp, Name, Add, Name
}

TEST(AstWalk, CountsNodesAndDepth) {
  NodePtr t = bin(name("a"), Kind::Add, unary(Kind::USub, name("b")));
  EXPECT_EQ(node_count(*t), 8u);
  EXPECT_EQ(depth(*t), 4u); // BinOp > UnaryOp > Name > Load
}

TEST(AstNode, ValidateFindsARequiredFieldLeftNull) {
  NodePtr m = module(list(expr_stmt(name("a")), B(Kind::Expr)));
  auto problem = validate(*m);
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(problem->message, "<module>/body[1]: required field 'value' of Expr is null");
  NodePtr ok = module(list(expr_stmt(name("a"))));
  EXPECT_FALSE(validate(*ok).has_value());
}

TEST(AstNode, EqualComparesLocationsOnlyWhenAsked) {
  NodePtr a = name("x").at(1, 0, 1, 1);
  NodePtr b = name("x").at(2, 4, 2, 5);
  EXPECT_FALSE(equal(*a, *b));
  EXPECT_TRUE(equal(*a, *b, false));
  b->attrs()["layout.dist"] = "S(0)R";
  EXPECT_TRUE(equal(*a, *b, false));
}

TEST(AstConstant, FloatsCompareBitwise) {
  EXPECT_NE(Constant{Float{0.0}}, Constant{Float{-0.0}});
  EXPECT_EQ(Constant{Float{std::nan("")}}, Constant{Float{std::nan("")}});
  EXPECT_NE(Constant{int64_t{1}}, Constant{true});
}

TEST(AstConstant, ParsesIntsIntoInt64OrBigInt) {
  Constant c;
  ASSERT_TRUE(parse_int_constant("-9223372036854775808", c));
  EXPECT_EQ(std::get<int64_t>(c), INT64_MIN);
  ASSERT_TRUE(parse_int_constant("0009223372036854775808", c));
  EXPECT_EQ(std::get<BigInt>(c).decimal, "9223372036854775808");
  EXPECT_FALSE(parse_int_constant("12a", c));
  EXPECT_FALSE(parse_int_constant("-", c));
  EXPECT_FALSE(parse_int_constant("", c));
}

} // namespace
} // namespace htp::ast
