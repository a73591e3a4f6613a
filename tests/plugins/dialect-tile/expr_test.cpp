// Unit tests of the tile dialect's scalar expressions (plugins/dialect-tile/expr.cpp): folding with Python
// semantics, printing, affine differences (static view extents) and value ranges (bounds checks).
#include <gtest/gtest.h>

#include "expr.hpp"

using tile::Expr;
using tile::make_op;

namespace {

Expr var(const char *n) {
  return tile::var_expr(n);
}

} // namespace

TEST(TileExpr, FoldsFloorDivisionAndModuloLikePython) {
  EXPECT_EQ(make_op("floordiv", {Expr(-7), Expr(2)}), Expr(-4));
  EXPECT_EQ(make_op("mod", {Expr(-7), Expr(2)}), Expr(1));
  EXPECT_EQ(make_op("mod", {Expr(7), Expr(-2)}), Expr(-1));
  EXPECT_EQ(make_op("floordiv", {Expr(256), Expr(32)}), Expr(8));
}

TEST(TileExpr, LeavesDivisionByZeroAndOverflowSymbolic) {
  EXPECT_TRUE(make_op("floordiv", {Expr(1), Expr(0)}).is_object());
  EXPECT_TRUE(make_op("mul", {Expr(INT64_MAX), Expr(2)}).is_object());
}

TEST(TileExpr, SimplifiesNeutralOperands) {
  EXPECT_EQ(make_op("add", {var("k"), Expr(0)}), var("k"));
  EXPECT_EQ(make_op("mul", {Expr(1), var("k")}), var("k"));
  Expr e = make_op("mul", {var("k"), Expr(32)});
  EXPECT_EQ(e, (Expr{{"op", "mul"}, {"args", {var("k"), Expr(32)}}}));
}

TEST(TileExpr, FoldsComparisonsAndSelects) {
  EXPECT_EQ(make_op("lt", {Expr(1), Expr(2.5)}), Expr(true));
  EXPECT_EQ(make_op("select", {Expr(false), Expr(1), Expr(2)}), Expr(2));
  EXPECT_EQ(make_op("and", {Expr(true), Expr(0)}), Expr(false));
}

TEST(TileExpr, PrintsWithPrecedence) {
  Expr e = make_op("mul", {make_op("add", {var("i"), Expr(1)}), Expr(16)});
  EXPECT_EQ(tile::expr_str(e), "(i + 1) * 16");
  EXPECT_EQ(tile::expr_str(make_op("sub", {var("a"), make_op("sub", {var("b"), var("c")})})), "a - (b - c)");
  EXPECT_EQ(tile::expr_str(tile::param_expr("n")), "n");
}

TEST(TileExpr, ConstantDifferenceOfAffineBounds) {
  Expr lo = make_op("mul", {var("i"), Expr(16)});
  Expr hi = make_op("mul", {make_op("add", {var("i"), Expr(1)}), Expr(16)});
  EXPECT_EQ(tile::constant_difference(hi, lo), std::optional<int64_t>(16));
  Expr mod = make_op("mod", {var("i"), Expr(32)}); // non-affine: an atom
  EXPECT_EQ(tile::constant_difference(make_op("add", {mod, Expr(1)}), mod), std::optional<int64_t>(1));
  EXPECT_EQ(tile::constant_difference(tile::param_expr("n"), Expr(0)), std::nullopt);
}

TEST(TileExpr, RangesOfLoopExpressions) {
  tile::VarRanges vars{{"k", {0, 3}}};
  auto r = htp::expr_range(make_op("add", {make_op("mul", {var("k"), Expr(64)}), Expr(64)}), vars).interval;
  ASSERT_TRUE(r);
  EXPECT_EQ(r->lo, 64);
  EXPECT_EQ(r->hi, 256);
  auto unknown = htp::expr_range(make_op("add", {var("j"), Expr(1)}), vars);
  EXPECT_FALSE(unknown.interval);
  EXPECT_FALSE(unknown.overflow);
  auto d = htp::expr_range(make_op("floordiv", {var("k"), Expr(2)}), vars).interval;
  ASSERT_TRUE(d);
  EXPECT_EQ(d->hi, 1);
}

TEST(TileExpr, ARangeThatLeavesInt64IsOverflowNotUnknown) {
  tile::VarRanges vars{{"i", {0, int64_t{1} << 62}}};
  auto r = htp::expr_range(make_op("mul", {var("i"), Expr(32)}), vars);
  EXPECT_FALSE(r.interval);
  EXPECT_TRUE(r.overflow);
  // x mod d stays in [0, d - 1] whatever x is.
  auto m = htp::expr_range(make_op("mod", {make_op("mul", {var("i"), Expr(32)}), Expr(8)}), vars).interval;
  ASSERT_TRUE(m);
  EXPECT_EQ(m->lo, 0);
  EXPECT_EQ(m->hi, 7);
}

TEST(TileExpr, AffineOverflowIsNotAConstant) {
  Expr big = make_op("mul", {var("k"), Expr(INT64_MAX)});
  Expr neg = make_op("mul", {var("k"), Expr(-1)});
  EXPECT_EQ(tile::constant_difference(big, neg), std::nullopt);
  EXPECT_EQ(tile::constant_difference(make_op("add", {var("k"), Expr(INT64_MAX)}),
                                      make_op("sub", {var("k"), Expr(1)})),
            std::nullopt);
}
