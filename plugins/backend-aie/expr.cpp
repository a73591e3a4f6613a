#include "expr.hpp"

#include <algorithm>
#include <cstdint>

namespace htp::aie {

namespace {

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::optional<int64_t> apply(const std::string &op, const std::vector<int64_t> &v, std::string *why) {
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

}  // namespace

std::optional<int64_t> eval_int(const Json &e, const ExprEnv &env, std::string *why) {
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
    std::vector<int64_t> v;
    for (const auto &a : e.value("args", Json::array())) {
      auto x = eval_int(a, env, why);
      if (!x) return std::nullopt;
      v.push_back(*x);
    }
    return apply(e["op"].get<std::string>(), v, why);
  }
  if (why) *why = "a malformed expression " + e.dump();
  return std::nullopt;
}

std::string expr_to_cpp(const Json &e, const std::function<std::string(const Json &leaf)> &name) {
  if (e.is_boolean()) return e.get<bool>() ? "1" : "0";
  if (e.is_number_integer()) return "int64_t(" + std::to_string(e.get<int64_t>()) + ")";
  if (e.is_number_float()) return e.dump();
  if (!e.is_object()) return "0";
  if (e.contains("var") || e.contains("param") || e.contains("read")) return name(e);
  const std::string op = e.value("op", "");
  std::vector<std::string> a;
  for (const auto &x : e.value("args", Json::array())) a.push_back(expr_to_cpp(x, name));
  auto bin = [&](const char *sym) { return a.size() == 2 ? "(" + a[0] + " " + sym + " " + a[1] + ")" : std::string("0"); };
  if (op == "add") return bin("+");
  if (op == "sub") return bin("-");
  if (op == "mul") return bin("*");
  if (op == "lt") return bin("<");
  if (op == "le") return bin("<=");
  if (op == "eq") return bin("==");
  if (op == "ne") return bin("!=");
  if (op == "gt") return bin(">");
  if (op == "ge") return bin(">=");
  if (op == "and") return bin("&&");
  if (op == "or") return bin("||");
  if (op == "floordiv" && a.size() == 2) return "htp_floordiv(" + a[0] + ", " + a[1] + ")";
  if (op == "mod" && a.size() == 2) return "htp_mod(" + a[0] + ", " + a[1] + ")";
  if (op == "min" && a.size() == 2) return "std::min<int64_t>(" + a[0] + ", " + a[1] + ")";
  if (op == "max" && a.size() == 2) return "std::max<int64_t>(" + a[0] + ", " + a[1] + ")";
  if (op == "neg" && a.size() == 1) return "(-" + a[0] + ")";
  if (op == "not" && a.size() == 1) return "(!" + a[0] + ")";
  if (op == "select" && a.size() == 3) return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
  return "0";
}

}  // namespace htp::aie
