// The symbolic count algebra: normal forms, substitution, division, evaluation and printing.
#include <gtest/gtest.h>

#include "symbolic.hpp"

using csp::Json;
using csp::Poly;

namespace {

Poly param(const char *n) {
  return Poly::atom(Json{{"param", n}});
}

} // namespace

TEST(CspSymbolic, ProductsCommute) {
  EXPECT_EQ(param("n") * Poly::constant(4), Poly::constant(4) * param("n"));
  EXPECT_EQ((param("n") + Poly::constant(1)) * Poly::constant(2),
            param("n") * Poly::constant(2) + Poly::constant(2));
}

TEST(CspSymbolic, ExprFoldsArithmetic) {
  Json e = {{"op", "add"},
            {"args", {{{"op", "mul"}, {"args", {2, {{"param", "n"}}}}}, {{"op", "sub"}, {"args", {5, 5}}}}}};
  EXPECT_EQ(csp::poly_of(e), param("n") * Poly::constant(2));
  EXPECT_EQ(csp::poly_of(Json{{"op", "floordiv"}, {"args", {-7, 2}}}).constant_value(), -4); // Python floor
}

TEST(CspSymbolic, SubstituteAndDivide) {
  Poly stream = Poly::atom(Json{{"stream", "c"}});
  Poly p = stream * Poly::constant(3) + Poly::constant(1);
  EXPECT_EQ(p.substitute(Json{{"stream", "c"}}.dump(), param("n")),
            param("n") * Poly::constant(3) + Poly::constant(1));
  EXPECT_FALSE(p.divided_by(3));
  EXPECT_EQ((param("n") * Poly::constant(4)).divided_by(4), param("n"));
}

TEST(CspSymbolic, PrintsReadableText) {
  EXPECT_EQ((param("n") * Poly::constant(4) + Poly::constant(2)).to_text(), "4*n + 2");
  EXPECT_EQ((Poly::constant(8) - param("n")).to_text(), "-n + 8");
  EXPECT_EQ(Poly().to_text(), "0");
}

TEST(CspSymbolic, ExprRoundTripsAndEvaluates) {
  Poly p = param("n") * Poly::constant(4) + Poly::constant(2);
  EXPECT_EQ(csp::poly_of(p.to_expr()), p);
  auto v = csp::evaluate_expr(p.to_expr(), [](const std::string &) -> std::optional<int64_t> { return 3; });
  EXPECT_EQ(v, 14);
}
