// Scalar expressions of the IR contracts (docs/ir-contracts.md §2): evaluation with known variables
// (the mapper resolves offsets, extents and trip counts at compile time) and printing as C++.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <htp/expr_eval.hpp>
#include <nlohmann/json.hpp>

namespace htp::aie {

using Json = nlohmann::json;

// ExprEnv and eval_int: htp/expr_eval.hpp (the SDK), found from this namespace.
using htp::ExprEnv;
using htp::eval_int;

/// `e` as a C++ expression; `name` spells variables and parameters (int64_t arithmetic, Python
/// floor division and modulo through htp_floordiv / htp_mod).
/// `where`, a C++ string literal of the statement's place ("\"prog.py:12\""), goes to floordiv and mod, so
/// that a divisor of 0 names it (empty: not named).
std::string expr_to_cpp(const Json &e, const std::function<std::string(const Json &leaf)> &name,
                        const std::string &where = {});

}  // namespace htp::aie
