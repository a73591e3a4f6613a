// Scalar expressions of the IR contracts (docs/ir-contracts.md §2): evaluation with known variables
// (the mapper resolves offsets, extents and trip counts at compile time) and printing as C++.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace htp::aie {

using Json = nlohmann::json;

/// Values of variables ({"var": v}) and parameters ({"param": p}) known at compile time.
struct ExprEnv {
  std::map<std::string, int64_t> vars;
  std::map<std::string, Json> params;  ///< constexpr values
  /// Element `index` of integer tensor `tensor` ({"read": ...}), at run time (host orchestration); unset
  /// at compile time, where a read is unknown.
  std::function<std::optional<int64_t>(const std::string &tensor, const std::vector<int64_t> &index, std::string *why)>
      read;
};

/// The integer value of `e`; nullopt with `why` set when it depends on something unknown.
std::optional<int64_t> eval_int(const Json &e, const ExprEnv &env, std::string *why = nullptr);

/// `e` as a C++ expression; `name` spells variables and parameters (int64_t arithmetic, Python
/// floor division and modulo through htp_floordiv / htp_mod).
std::string expr_to_cpp(const Json &e, const std::function<std::string(const Json &leaf)> &name);

}  // namespace htp::aie
