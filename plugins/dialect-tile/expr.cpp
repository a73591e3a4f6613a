#include "expr.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace tile {

std::optional<int64_t> int_literal(const Expr &e) {
  if (e.is_number_integer()) return e.get<int64_t>();
  return std::nullopt;
}

bool is_literal(const Expr &e) {
  return e.is_number() || e.is_boolean();
}

namespace {

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t pymod(int64_t a, int64_t b) {
  return a - floordiv(a, b) * b;
}

double num(const Expr &e) {
  return e.is_boolean() ? (e.get<bool>() ? 1.0 : 0.0) : e.get<double>();
}

/// Folds an integer op; nullopt on division by zero or overflow.
std::optional<int64_t> fold_int(const std::string &op, int64_t a, int64_t b) {
  int64_t r = 0;
  if (op == "add") return __builtin_add_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "sub") return __builtin_sub_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "mul") return __builtin_mul_overflow(a, b, &r) ? std::nullopt : std::optional<int64_t>(r);
  if (op == "floordiv" || op == "mod") {
    if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
    return op == "floordiv" ? floordiv(a, b) : pymod(a, b);
  }
  if (op == "min") return std::min(a, b);
  if (op == "max") return std::max(a, b);
  return std::nullopt;
}

std::optional<Expr> fold_compare(const std::string &op, const Expr &a, const Expr &b) {
  double x = num(a), y = num(b);
  if (op == "lt") return Expr(x < y);
  if (op == "le") return Expr(x <= y);
  if (op == "eq") return Expr(x == y);
  if (op == "ne") return Expr(x != y);
  if (op == "gt") return Expr(x > y);
  if (op == "ge") return Expr(x >= y);
  return std::nullopt;
}

std::optional<Expr> fold(const std::string &op, const std::vector<Expr> &args) {
  for (const auto &a : args)
    if (!is_literal(a)) return std::nullopt;
  if (op == "neg" && args.size() == 1) {
    if (auto i = int_literal(args[0]); i && *i != INT64_MIN) return Expr(-*i);
    if (args[0].is_number_float()) return Expr(-args[0].get<double>());
    return std::nullopt;
  }
  if (op == "not" && args.size() == 1) return Expr(num(args[0]) == 0.0);
  if (op == "select" && args.size() == 3) return num(args[0]) != 0.0 ? args[1] : args[2];
  if (args.size() != 2) return std::nullopt;
  if (auto c = fold_compare(op, args[0], args[1])) return c;
  if (op == "and") return Expr(num(args[0]) != 0.0 && num(args[1]) != 0.0);
  if (op == "or") return Expr(num(args[0]) != 0.0 || num(args[1]) != 0.0);
  auto ia = int_literal(args[0]), ib = int_literal(args[1]);
  if (ia && ib) {
    if (auto r = fold_int(op, *ia, *ib)) return Expr(*r);
    return std::nullopt;
  }
  double x = num(args[0]), y = num(args[1]);
  if (op == "add") return Expr(x + y);
  if (op == "sub") return Expr(x - y);
  if (op == "mul") return Expr(x * y);
  if (op == "min") return Expr(std::min(x, y));
  if (op == "max") return Expr(std::max(x, y));
  if (op == "floordiv" && y != 0.0) return Expr(std::floor(x / y));
  return std::nullopt;
}

bool is_int(const Expr &e, int64_t v) {
  return int_literal(e) == std::optional<int64_t>(v);
}

/// x + 0, 0 + x, x - 0, x * 1, 1 * x, x // 1.
std::optional<Expr> simplify(const std::string &op, const std::vector<Expr> &args) {
  if (args.size() != 2) return std::nullopt;
  const Expr &a = args[0], &b = args[1];
  if ((op == "add" || op == "sub") && is_int(b, 0)) return a;
  if (op == "add" && is_int(a, 0)) return b;
  if ((op == "mul" || op == "floordiv") && is_int(b, 1)) return a;
  if (op == "mul" && is_int(a, 1)) return b;
  return std::nullopt;
}

} // namespace

Expr make_op(const std::string &op, std::vector<Expr> args) {
  // A fold that leaves the finite floats stays symbolic: JSON, and so the IR, has no inf or nan.
  if (auto f = fold(op, args); f && !(f->is_number_float() && !std::isfinite(f->get<double>()))) return *f;
  if (auto s = simplify(op, args)) return *s;
  Expr e;
  e["op"] = op;
  e["args"] = std::move(args);
  return e;
}

// ---- printing

namespace {

struct OpText {
  const char *op, *text;
  int prec;
};
constexpr OpText kBinary[] = {
    {"or", " or ", 1}, {"and", " and ", 2},     {"lt", " < ", 4},  {"le", " <= ", 4}, {"eq", " == ", 4},
    {"ne", " != ", 4}, {"gt", " > ", 4},        {"ge", " >= ", 4}, {"add", " + ", 6}, {"sub", " - ", 6},
    {"mul", " * ", 7}, {"floordiv", " // ", 7}, {"mod", " % ", 7}};

std::string print(const Expr &e, int parent_prec) {
  if (e.is_boolean()) return e.get<bool>() ? "True" : "False";
  if (e.is_number()) return e.dump();
  if (!e.is_object()) return e.dump();
  if (e.contains("var")) return e["var"].get<std::string>();
  if (e.contains("param")) return e["param"].get<std::string>();
  if (e.contains("read")) {
    std::string s = e["read"].get<std::string>() + "[";
    const auto &idx = e["index"];
    for (size_t i = 0; i < idx.size(); ++i)
      s += (i ? ", " : "") + print(idx[i], 0);
    return s + "]";
  }
  std::string op = e.value("op", "");
  const auto &args = e.contains("args") ? e["args"] : Expr::array();
  for (const auto &b : kBinary)
    if (op == b.op && args.size() == 2) {
      std::string s = print(args[0], b.prec) + b.text + print(args[1], b.prec + 1);
      return b.prec < parent_prec ? "(" + s + ")" : s;
    }
  if (op == "neg" && args.size() == 1) return "-" + print(args[0], 8);
  if (op == "not" && args.size() == 1) return "not " + print(args[0], 3);
  std::string s = op + "(";
  for (size_t i = 0; i < args.size(); ++i)
    s += (i ? ", " : "") + print(args[i], 0);
  return s + ")";
}

} // namespace

std::string expr_str(const Expr &e) {
  return print(e, 0);
}

// ---- affine forms

namespace {

/// constant + sum(coeff * atom), atoms keyed by their JSON text.
struct Affine {
  int64_t constant = 0;
  std::map<std::string, int64_t> terms;
};

/// a + sign * b, or nullopt on overflow.
std::optional<Affine> combine(Affine a, const Affine &b, int64_t sign) {
  auto add = [&](int64_t &into, int64_t v) {
    int64_t scaled = 0;
    return !__builtin_mul_overflow(v, sign, &scaled) && !__builtin_add_overflow(into, scaled, &into);
  };
  if (!add(a.constant, b.constant)) return std::nullopt;
  for (const auto &[k, v] : b.terms)
    if (!add(a.terms[k], v)) return std::nullopt;
  return a;
}

std::optional<Affine> affine(const Expr &e) {
  if (auto i = int_literal(e)) return Affine{*i, {}};
  if (!e.is_object()) return std::nullopt;
  std::string op = e.value("op", "");
  const auto &args = e.contains("args") ? e["args"] : Expr::array();
  if ((op == "add" || op == "sub") && args.size() == 2) {
    auto a = affine(args[0]), b = affine(args[1]);
    if (!a || !b) return std::nullopt;
    return combine(*a, *b, op == "add" ? 1 : -1);
  }
  if (op == "neg" && args.size() == 1) {
    auto a = affine(args[0]);
    if (!a) return std::nullopt;
    return combine(Affine{}, *a, -1);
  }
  if (op == "mul" && args.size() == 2) {
    for (int k = 0; k < 2; ++k)
      if (auto c = int_literal(args[k])) {
        auto a = affine(args[1 - k]);
        if (!a) return std::nullopt;
        return combine(Affine{}, *a, *c);
      }
  }
  if (e.contains("op") && !e.contains("args")) return std::nullopt;
  return Affine{0, {{e.dump(), 1}}}; // an atom: variable, parameter, read or non-affine op
}

} // namespace

std::optional<int64_t> constant_difference(const Expr &a, const Expr &b) {
  auto x = affine(a), y = affine(b);
  if (!x || !y) return std::nullopt;
  auto d = combine(*x, *y, -1);
  if (!d) return std::nullopt;
  for (const auto &[k, v] : d->terms)
    if (v != 0) return std::nullopt;
  return d->constant;
}

// ---- ranges

} // namespace tile
