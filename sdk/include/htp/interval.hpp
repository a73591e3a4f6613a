// Integer ranges of the symbolic expressions dialects share (docs/ir-contracts.md: literals, {"var": v},
// {"op": name, "args": [...]}): the values a view's offset takes over its loops' ranges, so a view that
// leaves its tensor is found at compile time for every target. Header-only, templated on the JSON type
// (nlohmann::json or ordered_json) so plugins and the host share one evaluation.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace htp {

/// An inclusive integer range [lo, hi].
struct Interval {
  int64_t lo = 0;
  int64_t hi = 0;
};

/// The values an expression takes: `interval` when known; `overflow` when they leave int64 (then they are
/// outside any tensor); neither when an atom has no known range (a parameter, a tensor read, a variable
/// over a runtime extent) or an operation is not modelled.
struct ExprRange {
  std::optional<Interval> interval;
  bool overflow = false;
};

namespace detail {

inline int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

inline ExprRange overflowed() { return ExprRange{std::nullopt, true}; }

} // namespace detail

/// The range of integer expression `e` when the variables range over `vars` (inclusive bounds).
template <class Json>
ExprRange expr_range(const Json &e, const std::map<std::string, Interval> &vars) {
  if (e.is_number_integer()) {
    const int64_t v = e.template get<int64_t>();
    return ExprRange{Interval{v, v}};
  }
  if (!e.is_object()) return {};
  if (e.contains("var")) {
    auto it = vars.find(e["var"].template get<std::string>());
    if (it == vars.end()) return {};
    return ExprRange{it->second};
  }
  if (!e.contains("op") || !e.contains("args")) return {};
  const std::string op = e["op"].template get<std::string>();
  std::vector<ExprRange> in;
  for (const auto &a : e["args"]) in.push_back(expr_range(a, vars));
  // x mod d (d > 0) is in [0, d - 1] whatever x is.
  if (op == "mod" && in.size() == 2 && in[1].interval && in[1].interval->lo == in[1].interval->hi &&
      in[1].interval->lo > 0) {
    const int64_t d = in[1].interval->lo;
    const auto &a = in[0].interval;
    if (a && detail::floor_div(a->lo, d) == detail::floor_div(a->hi, d))
      return ExprRange{Interval{a->lo - detail::floor_div(a->lo, d) * d, a->hi - detail::floor_div(a->hi, d) * d}};
    return ExprRange{Interval{0, d - 1}};
  }
  const bool arithmetic = op == "add" || op == "sub" || op == "mul" || op == "neg";
  for (const auto &r : in) {
    if (r.overflow && arithmetic) return detail::overflowed();
    if (!r.interval) return {};
  }
  Interval out;
  if (op == "neg" && in.size() == 1) {
    if (in[0].interval->lo == INT64_MIN) return detail::overflowed();
    return ExprRange{Interval{-in[0].interval->hi, -in[0].interval->lo}};
  }
  if (in.size() != 2) return {};
  const Interval a = *in[0].interval, b = *in[1].interval;
  if (op == "add") {
    if (__builtin_add_overflow(a.lo, b.lo, &out.lo) || __builtin_add_overflow(a.hi, b.hi, &out.hi))
      return detail::overflowed();
    return ExprRange{out};
  }
  if (op == "sub") {
    if (__builtin_sub_overflow(a.lo, b.hi, &out.lo) || __builtin_sub_overflow(a.hi, b.lo, &out.hi))
      return detail::overflowed();
    return ExprRange{out};
  }
  if (op == "mul") {
    int64_t c[4];
    if (__builtin_mul_overflow(a.lo, b.lo, &c[0]) || __builtin_mul_overflow(a.lo, b.hi, &c[1]) ||
        __builtin_mul_overflow(a.hi, b.lo, &c[2]) || __builtin_mul_overflow(a.hi, b.hi, &c[3]))
      return detail::overflowed();
    return ExprRange{Interval{*std::min_element(c, c + 4), *std::max_element(c, c + 4)}};
  }
  if (op == "floordiv" && b.lo == b.hi && b.lo > 0)
    return ExprRange{Interval{detail::floor_div(a.lo, b.lo), detail::floor_div(a.hi, b.lo)}};
  if (op == "min") return ExprRange{Interval{std::min(a.lo, b.lo), std::min(a.hi, b.hi)}};
  if (op == "max") return ExprRange{Interval{std::max(a.lo, b.lo), std::max(a.hi, b.hi)}};
  return {};
}

/// "i in [0, 3], j in [0, 7]": the variables of `vars` that `e` mentions, for messages.
template <class Json>
std::string ranges_text(const Json &e, const std::map<std::string, Interval> &vars) {
  const std::string text = e.dump();
  std::string out;
  for (const auto &[var, r] : vars)
    if (text.find("\"var\":\"" + var + "\"") != std::string::npos)
      out += (out.empty() ? "" : ", ") + var + " in [" + std::to_string(r.lo) + ", " + std::to_string(r.hi) + "]";
  return out;
}

} // namespace htp
