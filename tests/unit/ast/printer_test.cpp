// The printer: ast.unparse's output for trees built in C++.
#include <gtest/gtest.h>

#include <cmath>

#include "ast/printer.hpp"
#include "tree_builder.hpp"

namespace htp::ast {
namespace {

using namespace test;

std::string print(B b) {
  return to_source(*std::move(b).take());
}

TEST(AstPrinter, ParenthesisesByPrecedence) {
  EXPECT_EQ(print(bin(bin(name("a"), Kind::Add, name("b")), Kind::Mult, name("c"))), "(a + b) * c");
  EXPECT_EQ(print(bin(name("a"), Kind::Add, bin(name("b"), Kind::Mult, name("c")))), "a + b * c");
  EXPECT_EQ(print(bin(name("a"), Kind::Sub, bin(name("b"), Kind::Sub, name("c")))), "a - (b - c)");
  EXPECT_EQ(print(bin(bin(name("a"), Kind::Sub, name("b")), Kind::Sub, name("c"))), "a - b - c");
  EXPECT_EQ(print(bin(name("a"), Kind::Pow, bin(name("b"), Kind::Pow, name("c")))), "a ** b ** c");
  EXPECT_EQ(print(bin(bin(name("a"), Kind::Pow, name("b")), Kind::Pow, name("c"))), "(a ** b) ** c");
  EXPECT_EQ(print(unary(Kind::USub, bin(name("a"), Kind::Pow, name("b")))), "-a ** b");
  EXPECT_EQ(print(bin(unary(Kind::USub, name("a")), Kind::Pow, name("b"))), "(-a) ** b");
  EXPECT_EQ(print(unary(Kind::Not, bin(name("a"), Kind::BitOr, name("b")))), "not a | b");
  EXPECT_EQ(print(bin(unary(Kind::Not, name("a")), Kind::BitOr, name("b"))), "(not a) | b");
}

TEST(AstPrinter, BoolOpsBindTighterOperandByOperand) {
  EXPECT_EQ(print(boolop(Kind::Or, list(name("a"), boolop(Kind::And, list(name("b"), name("c")))))),
            "a or (b and c)");
  EXPECT_EQ(print(boolop(Kind::And, list(boolop(Kind::Or, list(name("a"), name("b"))), name("c")))),
            "(a or b) and c");
}

TEST(AstPrinter, TuplesAreParenthesisedWhereNeeded) {
  EXPECT_EQ(print(module(list(expr_stmt(tuple(list(name("a"), name("b"))))))), "(a, b)");
  EXPECT_EQ(
      print(module(list(assign(list(tuple(list(name("a", Kind::Store), name("b", Kind::Store)), Kind::Store)),
                               tuple(list(name("b"), name("a"))))))),
      "a, b = (b, a)");
  EXPECT_EQ(print(tuple(list(name("a")))), "(a,)");
  EXPECT_EQ(print(tuple({})), "()");
  EXPECT_EQ(print(B(Kind::Subscript)
                      .f("value", name("x"))
                      .f("slice", tuple(list(num(1), num(2))))
                      .f("ctx", B(Kind::Load))),
            "x[1, 2]");
}

TEST(AstPrinter, WritesLiteralsAsRepr) {
  EXPECT_EQ(print(str("it's")), "\"it's\"");
  EXPECT_EQ(print(cst(Bytes{"\x00"})), "b''");
  EXPECT_EQ(print(cst(Bytes{std::string("\0", 1)})), "b'\\x00'");
  EXPECT_EQ(print(cst(Float{INFINITY})), "1e309");
  EXPECT_EQ(print(cst(Complex{0, INFINITY})), "1e309j");
  EXPECT_EQ(print(cst(Float{NAN})), "(1e309-1e309)");
  EXPECT_EQ(print(cst(EllipsisValue{})), "...");
  EXPECT_EQ(print(cst(BigInt{"123456789012345678901234567890"})), "123456789012345678901234567890");
  EXPECT_EQ(print(str("x").f("kind", std::string("u"))), "u'x'");
  EXPECT_EQ(
      print(B(Kind::Attribute).f("value", num(1)).f("attr", std::string("real")).f("ctx", B(Kind::Load))),
      "1 .real");
}

TEST(AstPrinter, WritesFStringsWithThe311QuoteRules) {
  auto fv = [](B value, int64_t conversion = -1) {
    return B(Kind::FormattedValue).f("value", std::move(value)).f("conversion", conversion);
  };
  auto joined = [](NodeList values) { return B(Kind::JoinedStr).f("values", std::move(values)); };
  EXPECT_EQ(print(joined(list(str("a{"), fv(name("x"), 'r'), str("\n")))), "f'a{{{x!r}\\n'");
  EXPECT_EQ(print(joined(list(
                fv(B(Kind::Subscript).f("value", name("d")).f("slice", str("k")).f("ctx", B(Kind::Load)))))),
            "f\"{d['k']}\"");
  EXPECT_EQ(print(joined(list(fv(name("x")).f("format_spec", joined(list(str(">"), fv(name("w")))))))),
            "f'{x:>{w}}'");
  EXPECT_EQ(print(joined(list(fv(B(Kind::Set).f("elts", list(num(1))))))), "f'{ {1}}'");
}

TEST(AstPrinter, WritesDocstringsWithTripleQuotes) {
  EXPECT_EQ(print(module(list(expr_stmt(str("Doc.\nMore.")), B(Kind::Pass)))),
            "\"\"\"Doc.\nMore.\"\"\"\npass");
}

TEST(AstPrinter, WritesDefinitionsWithDecoratorsAndBlankLines) {
  NodePtr f = def("f", list(ret(name("x"))), list(arg("x")));
  ASSERT_TRUE(f->insert("decorator_list", 0, name("kernel")).ok());
  f->set_span(Span{"t.py", 3, 0, 4, 12});
  NodePtr c = cls("C", list(B(Kind::Pass)));
  ASSERT_TRUE(c->insert("bases", 0, name("Base")).ok());
  EXPECT_EQ(print(module(list(B(std::move(f)), B(std::move(c))))),
            "@kernel\ndef f(x):\n    return x\n\nclass C(Base):\n    pass");
}

TEST(AstPrinter, CollapsesElseIfIntoElif) {
  B inner = B(Kind::If).f("test", name("b")).f("body", list(B(Kind::Pass))).f("orelse", list(B(Kind::Break)));
  B outer =
      B(Kind::If).f("test", name("a")).f("body", list(B(Kind::Pass))).f("orelse", list(std::move(inner)));
  EXPECT_EQ(print(std::move(outer)), "if a:\n    pass\nelif b:\n    pass\nelse:\n    break");
}

TEST(AstPrinter, WritesMatchStatements) {
  B case1 =
      B(Kind::match_case)
          .f("pattern", B(Kind::MatchOr)
                            .f("patterns", list(B(Kind::MatchValue).f("value", num(1)),
                                                B(Kind::MatchSingleton).f("value", Constant{NoneValue{}}))))
          .f("body", list(B(Kind::Pass)));
  B case2 =
      B(Kind::match_case)
          .f("pattern", B(Kind::MatchAs)
                            .f("pattern", B(Kind::MatchSequence).f("patterns", list(B(Kind::MatchStar))))
                            .f("name", std::string("rest")))
          .f("guard", name("ok"))
          .f("body", list(B(Kind::Pass)));
  B m = B(Kind::Match).f("subject", name("x")).f("cases", list(std::move(case1), std::move(case2)));
  EXPECT_EQ(print(std::move(m)),
            "match x:\n    case 1 | None:\n        pass\n    case [*_] as rest if ok:\n        pass");
}

TEST(AstPrinter, WritesArgumentListsWithDefaultsAndMarkers) {
  B args = B(Kind::arguments)
               .f("posonlyargs", list(arg("a")))
               .f("args", list(arg("b")))
               .f("defaults", list(num(1)))
               .f("kwonlyargs", list(arg("c"), arg("d")))
               .f("kw_defaults", list(B(nullptr), num(2)))
               .f("kwarg", arg("kw"));
  EXPECT_EQ(print(B(Kind::Lambda).f("args", std::move(args)).f("body", name("a"))),
            "lambda a, /, b=1, *, c, d=2, **kw: a");
}

TEST(AstPrinter, WritesRelativeImports) {
  EXPECT_EQ(
      print(B(Kind::ImportFrom)
                .f("level", int64_t{2})
                .f("names", list(B(Kind::alias).f("name", std::string("x")).f("asname", std::string("y"))))),
      "from .. import x as y");
}

TEST(AstPrinter, MarksMissingRequiredFields) {
  EXPECT_EQ(print(bin(name("a"), Kind::Add, name("b")).f("right", Value(std::monostate{}))), "a + <missing>");
}

} // namespace
} // namespace htp::ast
