// Integer evaluation of the scalar expressions of the IR contracts (docs/ir-contracts.md §2) with the
// variables and compile-time parameters a caller knows: offsets, extents and trip counts resolved at compile
// time (backend-aie's mapper, htp::loop_workload), or at run time by a host walking a task graph.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace htp {

/// Values of variables ({"var": v}) and parameters ({"param": p}) known to the caller.
struct ExprEnv {
  std::map<std::string, int64_t> vars;
  std::map<std::string, nlohmann::json> params;  ///< constexpr values
  /// Element `index` of integer tensor `tensor` ({"read": ...}), at run time (host orchestration); unset
  /// at compile time, where a read is unknown.
  std::function<std::optional<int64_t>(const std::string &tensor, const std::vector<int64_t> &index, std::string *why)>
      read;
};

/// C++ source of the helpers emitted kernels evaluate an Expr's `floordiv`, `mod`, `min` and `max` with, with
/// Python's semantics for their operand types: integers floor (-7 // 2 == -4, -7 % 2 == 1); a floating operand
/// makes them floating (7.25 % 2.0 == 1.25, 1.75 // 0.5 == 3.0; a % b is a - floor(a / b) * b, of the divisor's
/// sign; without <cmath>, which a device compiler may not have); `min` and `max` keep their operands' common
/// type (a runtime f32 scalar stays one). An integer divisor of 0 throws on a simulator and in host code
/// (HTP_HOST_CODE): a run error, not a SIGFPE that kills the process, naming the program's line when the
/// emitter passes it (htp_floordiv(a, b, "prog.py:12")); so does a loop's step of 0 (Python's
/// range raises). There, too, every emitted loop iteration polls the run's stop flag (HTP_TICK;
/// htp/run_time_limit.hpp binds it) and throws once its time limit passed.
inline constexpr const char *kScalarHelpersCpp = R"HTP(#include <cstdint>
#include <type_traits>
#if defined(__CPU_SIM) || defined(HTP_AIE_SIM) || defined(HTP_HOST_CODE)
#include <exception>
struct htp_division_by_zero : std::exception {
  char text[192] = {};
  explicit htp_division_by_zero(const char *where) {
    const char *parts[] = {where ? where : "", where ? ": runtime data: " : "",
                           "integer division by zero in a scalar expression (// or %)"};
    unsigned n = 0;
    for (const char *p : parts)
      for (; *p && n + 1 < sizeof text; ++p) text[n++] = *p;
  }
  const char *what() const noexcept override { return text; }
};
#define HTP_CHECK_DIVISOR(y, where) do { if ((y) == 0) throw htp_division_by_zero(where); } while (0)
#include <cstdio>
struct htp_overflow : std::exception {
  char text[256] = {};
  htp_overflow(const char *where, const char *op, long long a, long long b) {
    std::snprintf(text, sizeof text, "%s%s'%s' of %lld and %lld overflows 64 bits", where ? where : "",
                  where ? ": runtime data: " : "", op, a, b);
  }
  const char *what() const noexcept override { return text; }
};
#define HTP_OVERFLOW(where, op, a, b) throw htp_overflow(where, op, a, b)
struct htp_zero_step : std::exception {
  const char *what() const noexcept override { return "range() step is 0 at run time (Python raises ValueError)"; }
};
#define HTP_CHECK_STEP(s) do { if ((s) == 0) throw htp_zero_step(); } while (0)
#include <atomic>
struct htp_time_limit : std::exception {
  const char *what() const noexcept override { return "the run passed its time limit (--option timeout_s)"; }
};
inline const std::atomic<bool> *htp_stop_flag = nullptr;
extern "C" __attribute__((weak, visibility("default"))) void htp_sim_bind_stop(const std::atomic<bool> *flag) {
  htp_stop_flag = flag;
}
#define HTP_TICK() do { if (htp_stop_flag && htp_stop_flag->load(std::memory_order_relaxed)) throw htp_time_limit(); } while (0)
#else
#define HTP_CHECK_DIVISOR(y, where) ((void)(where))
#define HTP_OVERFLOW(where, op, a, b) ((void)(where))
#define HTP_CHECK_STEP(s) ((void)0)
#define HTP_TICK() ((void)0)
#endif
template <class S> static inline S htp_range_step(S s) {
  HTP_CHECK_STEP(s);
  return s;
}
template <class A, class B> static inline auto htp_floordiv(A a, B b, const char *where = nullptr) {
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
    HTP_CHECK_DIVISOR(b, where);
    const int64_t x = a, y = b, q = x / y;
    return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
  } else {
    (void)where;
    const double q = double(a) / double(b), t = double(int64_t(q));
    return t > q ? t - 1 : t;
  }
}
template <class A, class B> static inline auto htp_mod(A a, B b, const char *where = nullptr) {
  if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {
    HTP_CHECK_DIVISOR(b, where);
    const int64_t x = a, y = b, r = x % y;
    return (r != 0 && ((r < 0) != (y < 0))) ? r + y : r;
  } else {
    (void)where;
    return double(a) - htp_floordiv(a, b) * double(b);
  }
}
// Integer + - * of a workload's expressions (scalar arguments, offsets, extents, conditions) in 64 bits, as
// the host evaluates them on the other target: past 64 bits a run error (on a simulator), not a wrapped value.
#define HTP_CHECKED_ARITHMETIC(name, builtin, sign, op)                                                   \
  template <class A, class B> static inline auto name(A a, B b, const char *where = nullptr) {          \
    if constexpr (std::is_integral_v<A> && std::is_integral_v<B>) {                                     \
      int64_t r = 0;                                                                                    \
      if (builtin(int64_t(a), int64_t(b), &r)) HTP_OVERFLOW(where, op, (long long)a, (long long)b);     \
      return r;                                                                                         \
    } else {                                                                                            \
      (void)where;                                                                                      \
      return a sign b;                                                                                  \
    }                                                                                                   \
  }
HTP_CHECKED_ARITHMETIC(htp_add, __builtin_add_overflow, +, "add")
HTP_CHECKED_ARITHMETIC(htp_sub, __builtin_sub_overflow, -, "sub")
HTP_CHECKED_ARITHMETIC(htp_mul, __builtin_mul_overflow, *, "mul")
#undef HTP_CHECKED_ARITHMETIC
template <class A, class B> static inline auto htp_min(A a, B b) { return a < b ? a : b; }
template <class A, class B> static inline auto htp_max(A a, B b) { return a < b ? b : a; }
)HTP";

/// The condition of an emitted `for (v = start; <condition>; v += step)` of a `range(start, stop, step)` loop,
/// as Python runs it: v < stop for a positive step, v > stop for a negative one (range(3, -1, -1) counts down;
/// range(2, 5, -1) runs zero times), decided at run time when the step is not a literal (a zero step, which
/// Python refuses, runs zero times instead of forever).
inline std::string loop_condition_cpp(const std::string &v, const std::string &stop, const nlohmann::json &step,
                                      const std::string &step_cpp) {
  if (step.is_number()) {
    const double s = step.get<double>();
    return s > 0 ? v + " < " + stop : s < 0 ? v + " > " + stop : std::string("false");
  }
  // (a step of 0 known only at run time: Python's range raises; a simulator's run error, htp_range_step)
  return "(htp_range_step(" + step_cpp + ") > 0 ? " + v + " < " + stop + " : (" + step_cpp + ") < 0 && " + v + " > " +
         stop + ")";
}

namespace expr_detail {

inline int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

inline std::optional<int64_t> apply(const std::string &op, const std::vector<int64_t> &v, std::string *why) {
  auto need = [&](size_t n) {
    if (v.size() == n) return true;
    if (why) *why = "operator '" + op + "' takes " + std::to_string(n) + " operands";
    return false;
  };
  if (op == "neg" || op == "not") {
    if (!need(1)) return std::nullopt;
    if (op == "neg" && v[0] == INT64_MIN) {
      if (why) *why = "negating " + std::to_string(v[0]) + " overflows 64 bits";
      return std::nullopt;
    }
    return op == "neg" ? -v[0] : static_cast<int64_t>(!v[0]);
  }
  if (op == "select") {
    if (!need(3)) return std::nullopt;
    return v[0] ? v[1] : v[2];
  }
  if (!need(2)) return std::nullopt;
  const int64_t a = v[0], b = v[1];
  if ((op == "floordiv" || op == "mod") && b == 0) {
    if (why) *why = "division by zero";
    return std::nullopt;
  }
  int64_t r = 0;
  if ((op == "add" && __builtin_add_overflow(a, b, &r)) || (op == "sub" && __builtin_sub_overflow(a, b, &r)) ||
      (op == "mul" && __builtin_mul_overflow(a, b, &r)) ||
      ((op == "floordiv" || op == "mod") && a == INT64_MIN && b == -1)) {
    if (why) *why = "'" + op + "' of " + std::to_string(a) + " and " + std::to_string(b) + " overflows 64 bits";
    return std::nullopt;
  }
  if (op == "add" || op == "sub" || op == "mul") return r;
  if (op == "floordiv") return floordiv(a, b);
  if (op == "mod") return a - floordiv(a, b) * b;
  if (op == "min") return std::min(a, b);
  if (op == "max") return std::max(a, b);
  if (op == "lt") return a < b;
  if (op == "le") return a <= b;
  if (op == "eq") return a == b;
  if (op == "ne") return a != b;
  if (op == "gt") return a > b;
  if (op == "ge") return a >= b;
  if (op == "and") return a && b;
  if (op == "or") return a || b;
  if (why) *why = "unknown operator '" + op + "'";
  return std::nullopt;
}

}  // namespace expr_detail

/// base ** exponent as Python computes it for a size written `2 ** 20`: nullopt for a negative exponent or a
/// value past 64 bits.
inline std::optional<int64_t> int_power(int64_t base, int64_t exponent) {
  if (exponent < 0) return std::nullopt;
  if (base == 0 || base == 1) return exponent == 0 ? 1 : base;
  if (base == -1) return exponent % 2 ? -1 : 1;
  if (exponent > 63) return std::nullopt;  // |base| >= 2 overflows
  int64_t r = 1;
  for (int64_t k = 0; k < exponent; ++k)
    if (__builtin_mul_overflow(r, base, &r)) return std::nullopt;
  return r;
}

/// The integer value of `e`; nullopt with `why` set when it depends on something unknown.
inline std::optional<int64_t> eval_int(const nlohmann::json &e, const ExprEnv &env, std::string *why = nullptr) {
  using Json = nlohmann::json;
  if (e.is_boolean()) return e.get<bool>() ? 1 : 0;
  if (e.is_number_integer()) return e.get<int64_t>();
  if (e.is_number_float()) {
    double d = e.get<double>();
    // Only a whole value in int64's range converts (the cast of anything else is undefined).
    if (d >= -9.2233720368547758e18 && d < 9.2233720368547758e18 && d == static_cast<double>(static_cast<int64_t>(d)))
      return static_cast<int64_t>(d);
    if (why) *why = "a non-integer value " + e.dump();
    return std::nullopt;
  }
  if (!e.is_object()) {
    if (why) *why = "a malformed expression " + e.dump();
    return std::nullopt;
  }
  if (e.contains("var")) {
    auto it = env.vars.find(e["var"].get<std::string>());
    if (it != env.vars.end()) return it->second;
    if (why) *why = "variable '" + e["var"].get<std::string>() + "' is not known at compile time";
    return std::nullopt;
  }
  if (e.contains("param")) {
    auto it = env.params.find(e["param"].get<std::string>());
    if (it != env.params.end()) return eval_int(it->second, env, why);
    if (why) *why = "parameter '" + e["param"].get<std::string>() + "' is a runtime value";
    return std::nullopt;
  }
  if (e.contains("read")) {
    if (!env.read) {
      if (why) *why = "it reads tensor '" + e["read"].get<std::string>() + "' at run time";
      return std::nullopt;
    }
    std::vector<int64_t> index;
    for (const auto &a : e.value("index", Json::array())) {
      auto x = eval_int(a, env, why);
      if (!x) return std::nullopt;
      index.push_back(*x);
    }
    return env.read(e["read"].get<std::string>(), index, why);
  }
  if (e.contains("op")) {
    const std::string &op = e["op"].get_ref<const std::string &>();
    const Json &args = e.contains("args") ? e["args"] : Json::array();
    // As Python evaluates them: the branch `select` does not take, and the right operand `and` / `or` settle
    // without, are not evaluated (`n > 0 and 64 // n > 2` at n = 0 is false, not a division by zero).
    if ((op == "select" && args.size() == 3) || ((op == "and" || op == "or") && args.size() == 2)) {
      auto first = eval_int(args[0], env, why);
      if (!first) return std::nullopt;
      if (op == "select") return eval_int(args[*first ? 1 : 2], env, why);
      if ((op == "and") != (*first != 0)) return static_cast<int64_t>(op == "or");
      auto second = eval_int(args[1], env, why);
      if (!second) return std::nullopt;
      return static_cast<int64_t>(*second != 0);
    }
    std::vector<int64_t> v;
    for (const auto &a : e.value("args", Json::array())) {
      auto x = eval_int(a, env, why);
      if (!x) return std::nullopt;
      v.push_back(*x);
    }
    return expr_detail::apply(e["op"].get<std::string>(), v, why);
  }
  if (why) *why = "a malformed expression " + e.dump();
  return std::nullopt;
}


}  // namespace htp
