// Stable ids: symbol path + structural position.
#include <gtest/gtest.h>

#include "ast/stable_id.hpp"
#include "ast/walk.hpp"
#include "tree_builder.hpp"

namespace htp::ast {
namespace {

using namespace test;

// def vector_add(a, b):
//     x = a
//     y = b
//     return a + b
// class Model:
//     def forward(self, x): return x
//     def forward(self, y): return y
// z = 1
NodePtr sample() {
  return module(list(
      def("vector_add",
          list(assign(list(name("x", Kind::Store)), name("a")),
               assign(list(name("y", Kind::Store)), name("b")), ret(bin(name("a"), Kind::Add, name("b")))),
          list(arg("a"), arg("b"))),
      cls("Model", list(def("forward", list(ret(name("x"))), list(arg("self"), arg("x"))),
                        def("forward", list(ret(name("y"))), list(arg("self"), arg("y"))))),
      assign(list(name("z", Kind::Store)), num(1))));
}

TEST(AstStableId, NamesNodesBySymbolAndPosition) {
  NodePtr m = sample();
  Node *f = m->children("body")[0].get();
  EXPECT_EQ(stable_id(*m), "<module>");
  EXPECT_EQ(stable_id(*f), "vector_add");
  EXPECT_EQ(stable_id(*f->children("body")[2]->child("value")), "vector_add/body[2]/value");
  EXPECT_EQ(stable_id(*f->child("args")->children("args")[1]), "vector_add/args/args[1]");
  EXPECT_EQ(stable_id(*m->children("body")[2]->child("value")), "<module>/body[2]/value");
}

TEST(AstStableId, QualifiesMethodsAndNumbersRepeatedNames) {
  NodePtr m = sample();
  Node *model = m->children("body")[1].get();
  EXPECT_EQ(stable_id(*model), "Model");
  EXPECT_EQ(stable_id(*model->children("body")[0]->child("args")->children("args")[1]),
            "Model.forward/args/args[1]");
  EXPECT_EQ(stable_id(*model->children("body")[1]), "Model.forward#2");
  EXPECT_EQ(stable_id(*model->children("body")[1]->children("body")[0]->child("value")),
            "Model.forward#2/body[0]/value");
}

TEST(AstStableId, IsRecomputedAfterEdits) {
  NodePtr m = sample();
  Node *f = m->children("body")[0].get();
  Node *sum = f->children("body")[2]->child("value");
  ASSERT_TRUE(f->insert("body", 0, B(Kind::Pass)).ok());
  EXPECT_EQ(stable_id(*sum), "vector_add/body[3]/value");
  ASSERT_TRUE(m->insert("body", 0, def("vector_add", list(B(Kind::Pass)))).ok());
  EXPECT_EQ(stable_id(*sum), "vector_add#2/body[3]/value");
}

TEST(AstStableId, FindByIdInvertsStableIdForEveryNode) {
  NodePtr m = sample();
  size_t checked = 0;
  walk(*m, [&](Node &n) {
    EXPECT_EQ(find_by_id(*m, stable_id(n)), &n) << stable_id(n);
    ++checked;
  });
  EXPECT_EQ(checked, node_count(*m));
}

TEST(AstStableId, FindByIdRejectsIdsThatNameNothing) {
  NodePtr m = sample();
  for (const char *id :
       {"nothing", "vector_add/body[9]", "vector_add/nofield", "Model.forward#3", "Model.forward#1",
        "<module>/body[0]", "vector_add/body[x]", "vector_add/body[2]/value/left[0]"})
    EXPECT_EQ(find_by_id(*m, id), nullptr) << id;
}

} // namespace
} // namespace htp::ast
