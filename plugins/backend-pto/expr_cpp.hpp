// Prints scalar expressions (docs/ir-contracts.md §2) as C++ for kernels and orchestration code.
// Integer arithmetic is int64_t; floordiv/mod/min/max use the helpers of expr_helpers_cpp().
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ptobe {

/// How the names of an expression are spelled in the generated code.
struct ExprNames {
  std::function<std::string(const std::string &)> var;    ///< loop/axis variable
  std::function<std::string(const std::string &)> param;  ///< scalar parameter, constexpr or dimension symbol
  /// an element of an integer tensor: tensor name and the printed index expressions
  std::function<std::string(const std::string &, const std::vector<std::string> &)> read;
  /// The statement's place as a C++ string literal ("\"prog.py:12\""), given to floordiv and mod so that a
  /// divisor of 0 names it; empty: not named.
  std::string where;
  /// Integer + - * through htp_add / htp_sub / htp_mul, a run error past 64 bits (a workload's expressions, which
  /// the host evaluates in 64 bits); otherwise C++'s operators (a kernel's scalars keep their dtype's width).
  bool checked = false;
};

/// The C++ text of `e`; throws IrError (kernel_ir.hpp) for a malformed expression.
std::string expr_to_cpp(const nlohmann::json &e, const ExprNames &names);

/// Static inline helpers the printed expressions use (Python floor division and modulo, min, max).
std::string expr_helpers_cpp();

/// A C++ literal for a JSON number or bool (doubles keep their full precision).
std::string literal_cpp(const nlohmann::json &v);

}  // namespace ptobe
