// Scalar expressions (docs/ir-contracts.md §2) as JSON: construction with folding of literal operands
// (Python semantics), printing for messages, affine differences (static view extents) and value ranges
// (bounds checks of views inside loops with static bounds).
#pragma once

#include <htp/interval.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tile {

using Expr = nlohmann::ordered_json;

inline Expr var_expr(const std::string &name) {
  return Expr{{"var", name}};
}
inline Expr param_expr(const std::string &name) {
  return Expr{{"param", name}};
}

/// The int of a literal int expression (bools excluded).
std::optional<int64_t> int_literal(const Expr &e);
/// Whether `e` is a literal (number or bool).
bool is_literal(const Expr &e);

/// `{"op": op, "args": args}`, folded when every operand is a literal and simplified for neutral operands
/// (x + 0, x * 1, ...). Ops: add sub mul floordiv mod min max neg lt le eq ne gt ge and or not select.
/// A fold that would divide by zero or overflow is left symbolic.
Expr make_op(const std::string &op, std::vector<Expr> args);

/// Python-like text for messages: `k * 32 + 32`, `n`, `lengths[b]`.
std::string expr_str(const Expr &e);

/// `a - b` when it is a constant for all values of the variables (both affine in the same atoms).
std::optional<int64_t> constant_difference(const Expr &a, const Expr &b);

/// Known ranges of variables (loop variables with static bounds).
using VarRanges = std::map<std::string, htp::Interval>;

} // namespace tile
