// Symbolic item counts: contract Exprs (docs/ir-contracts.md §2) normalised to polynomials with integer
// coefficients, so that `n * 4` and `4 * n` compare equal when put and get counts are balanced.
#pragma once

#include "csp_common.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace csp {

/// A polynomial over opaque atoms; an atom is any Expr the normaliser does not fold (a parameter,
/// `n // 2`, a tensor read, or the internal stream-length placeholder {"stream": c}).
class Poly {
public:
  using Monomial = std::vector<std::string>; ///< sorted atom keys (Expr JSON text); empty = constant

  Poly() = default;
  static Poly constant(int64_t c);
  /// The atom `expr` (kept as its JSON text).
  static Poly atom(const Json &expr);

  Poly operator+(const Poly &o) const;
  Poly operator-(const Poly &o) const;
  Poly operator*(const Poly &o) const;
  bool operator==(const Poly &o) const { return terms_ == o.terms_; }
  bool operator!=(const Poly &o) const { return terms_ != o.terms_; }

  bool is_zero() const { return terms_.empty(); }
  /// The value when the polynomial has no atom.
  std::optional<int64_t> constant_value() const;
  /// This polynomial divided by k when every coefficient is a multiple of k.
  std::optional<Poly> divided_by(int64_t k) const;
  /// Every occurrence of the atom `key` replaced by `with`.
  Poly substitute(const std::string &key, const Poly &with) const;
  /// Whether some monomial holds an atom whose key satisfies `pred`.
  bool has_atom(const std::function<bool(const Json &)> &pred) const;
  /// The value with every atom evaluated by `atom_value` (nullopt when an atom has no value).
  std::optional<int64_t>
  evaluate(const std::function<std::optional<int64_t>(const Json &)> &atom_value) const;

  /// The contract Expr: an integer, an atom, or add/mul/neg of them, in a deterministic order.
  Json to_expr() const;
  /// Readable text for diagnostics: `8`, `n`, `4*n + 2`.
  std::string to_text() const;

private:
  void add_term(const Monomial &m, int64_t c);
  std::map<Monomial, int64_t> terms_; ///< no zero coefficient
};

/// Normalises a contract Expr: integers, add, sub, mul, neg fold; everything else is an atom.
Poly poly_of(const Json &expr);

/// Evaluates a contract Expr with integer semantics (Python floor division); params from `param_value`.
std::optional<int64_t>
evaluate_expr(const Json &expr,
              const std::function<std::optional<int64_t>(const std::string &)> &param_value);

/// What names mean when a Python expression becomes an Expr.
struct ExprScope {
  const Json *constants = nullptr; ///< captured module constants (name -> value)
  std::set<std::string> params;    ///< scalar / constexpr parameters: {"param": name}
  std::set<std::string> loop_vars; ///< loop variables: {"var": name}
};

/// The Expr of a Python integer expression (int constants, names, + - * // % unary -, min, max), or
/// nullopt with `why` set.
std::optional<Json> expr_of(htp::NodeRef n, const ExprScope &scope, std::string &why);

/// Whether an Expr mentions a loop variable ({"var": ...}).
bool mentions_var(const Json &expr);

} // namespace csp
