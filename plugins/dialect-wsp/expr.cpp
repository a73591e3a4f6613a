#include "expr.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>

#include <htp/expr_eval.hpp>

namespace wsp {

namespace {

const std::map<std::string, std::string> kBinOps = {
    {"Add", "add"}, {"Sub", "sub"}, {"Mult", "mul"}, {"FloorDiv", "floordiv"}, {"Mod", "mod"}};
const std::map<std::string, std::string> kCompareOps = {{"Lt", "lt"},    {"LtE", "le"}, {"Eq", "eq"},
                                                        {"NotEq", "ne"}, {"Gt", "gt"},  {"GtE", "ge"}};

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

int64_t floormod(int64_t a, int64_t b) {
  return a - floordiv(a, b) * b;
}

std::optional<bool> bool_of(const json &e) {
  if (e.is_boolean()) return e.get<bool>();
  return std::nullopt;
}

/// Folds an integer operation; nullopt when it cannot (division by zero and 64-bit overflow are left
/// symbolic, for the checks that read the expression to report).
std::optional<json> fold_int(const std::string &name, int64_t a, int64_t b) {
  int64_t r = 0;
  if ((name == "add" && __builtin_add_overflow(a, b, &r)) || (name == "sub" && __builtin_sub_overflow(a, b, &r)) ||
      (name == "mul" && __builtin_mul_overflow(a, b, &r)) ||
      ((name == "floordiv" || name == "mod") && a == INT64_MIN && b == -1))
    return std::nullopt;
  static const std::map<std::string, std::function<json(int64_t, int64_t)>> ops = {
      {"add", [](int64_t x, int64_t y) { return json(x + y); }},
      {"sub", [](int64_t x, int64_t y) { return json(x - y); }},
      {"mul", [](int64_t x, int64_t y) { return json(x * y); }},
      {"floordiv", [](int64_t x, int64_t y) { return json(floordiv(x, y)); }},
      {"mod", [](int64_t x, int64_t y) { return json(floormod(x, y)); }},
      {"min", [](int64_t x, int64_t y) { return json(std::min(x, y)); }},
      {"max", [](int64_t x, int64_t y) { return json(std::max(x, y)); }},
      {"lt", [](int64_t x, int64_t y) { return json(x < y); }},
      {"le", [](int64_t x, int64_t y) { return json(x <= y); }},
      {"eq", [](int64_t x, int64_t y) { return json(x == y); }},
      {"ne", [](int64_t x, int64_t y) { return json(x != y); }},
      {"gt", [](int64_t x, int64_t y) { return json(x > y); }},
      {"ge", [](int64_t x, int64_t y) { return json(x >= y); }}};
  auto it = ops.find(name);
  if (it == ops.end() || ((name == "floordiv" || name == "mod") && b == 0)) return std::nullopt;
  return it->second(a, b);
}

/// Identities that keep offsets readable: x+0, 0+x, x-0, x*1, 1*x, x*0, 0*x, x//1.
std::optional<json> simplify(const std::string &name, const json &a, const json &b) {
  auto ia = int_of(a), ib = int_of(b);
  if (name == "add" && ib == 0) return a;
  if (name == "add" && ia == 0) return b;
  if (name == "sub" && ib == 0) return a;
  if (name == "mul" && (ia == 0 || ib == 0)) return json(0);
  if (name == "mul" && ib == 1) return a;
  if (name == "mul" && ia == 1) return b;
  if (name == "floordiv" && ib == 1) return a;
  return std::nullopt;
}

std::optional<json> fold_bool(const std::string &name, const std::vector<json> &args) {
  if (name == "not" && args.size() == 1)
    if (auto b = bool_of(args[0])) return json(!*b);
  if ((name == "and" || name == "or") && args.size() == 2) {
    bool is_and = name == "and";
    for (int i = 0; i < 2; ++i)
      if (auto b = bool_of(args[i])) return (*b == is_and) ? args[1 - i] : json(!is_and);
  }
  if (name == "select" && args.size() == 3)
    if (auto c = bool_of(args[0])) return *c ? args[1] : args[2];
  return std::nullopt;
}

/// An affine form: coefficients of non-affine atoms (keyed by their JSON text) plus a constant.
struct Affine {
  std::map<std::string, int64_t> terms;
  int64_t constant = 0;
  void add(const Affine &o, int64_t scale) {
    for (const auto &[k, c] : o.terms)
      terms[k] += c * scale;
    constant += o.constant * scale;
  }
};

Affine affine(const json &e) {
  Affine out;
  if (auto i = int_of(e)) {
    out.constant = *i;
    return out;
  }
  if (e.is_object() && e.contains("op")) {
    const std::string op = e["op"];
    const json &args = e["args"];
    if ((op == "add" || op == "sub") && args.size() == 2) {
      out.add(affine(args[0]), 1);
      out.add(affine(args[1]), op == "add" ? 1 : -1);
      return out;
    }
    if (op == "neg" && args.size() == 1) {
      out.add(affine(args[0]), -1);
      return out;
    }
    if (op == "mul" && args.size() == 2) {
      for (int i = 0; i < 2; ++i)
        if (auto k = int_of(args[i])) {
          out.add(affine(args[1 - i]), *k);
          return out;
        }
    }
  }
  out.terms[e.dump()] = 1;
  return out;
}

[[noreturn]] void fail(htp::NodeRef at, const std::string &message) {
  throw WspError(at, "wsp.expr", message);
}

json lower_name(htp::NodeRef e, const Env &env) {
  std::string id = *e.text("id");
  if (auto it = env.values.find(id); it != env.values.end()) return it->second;
  if (env.constants.contains(id)) {
    const json &c = env.constants[id];
    if (c.is_number() || c.is_boolean()) return c;
    fail(e, "constant '" + id + "' is " + c.type_name() +
                ", not a number, so it cannot appear in an expression");
  }
  if (env.tensors.count(id))
    fail(e, "tensor '" + id + "' is not a scalar: read an element with " + id + "[i] or pass it to a kernel");
  if (env.sparse.count(id))
    fail(e, "'" + id + "' is a Sparse axis: iterate its selected indices with `for e in P.sel(" + id +
                "[row])`");
  fail(e, "name '" + id +
              "' is not a loop variable, scalar parameter, local or captured constant of the workload");
}

json lower_constant(htp::NodeRef e) {
  auto c = e.constant();
  if (c && c->kind == HTP_CONST_BOOL) return json(c->i != 0);
  if (c && c->kind == HTP_CONST_INT) return json(c->i);
  if (c && c->kind == HTP_CONST_FLOAT) {
    if (!std::isfinite(c->real)) fail(e, "float constant " + std::string(std::isnan(c->real) ? "nan" : "inf") +
                                             " is not finite; workload expressions take finite floats");
    return json(c->real);
  }
  fail(e, "only int, float and bool constants can appear in a workload expression");
}

json lower_read(htp::NodeRef e, const TensorDecl &t, const Env &env) {
  if (!is_integer_dtype(t.dtype))
    fail(e, "reading '" + t.name + "' in an expression needs an integer tensor, but '" + t.name + "' is " +
                t.dtype);
  htp::NodeRef slice = e.child("slice");
  std::vector<htp::NodeRef> idx = slice.is("Tuple") ? slice.items("elts") : std::vector<htp::NodeRef>{slice};
  if (idx.size() != t.shape.size())
    fail(e, "'" + t.name + "' has " + std::to_string(t.shape.size()) + " dimension(s) but is read with " +
                std::to_string(idx.size()) + " index(es)");
  json index = json::array();
  for (auto i : idx) {
    if (i.is("Slice")) fail(i, "a slice of '" + t.name + "' is not a scalar; read one element");
    index.push_back(lower_expr(i, env));
  }
  return json{{"read", t.name}, {"index", index}};
}

/// `T.shape[k]`: the dimension as a literal or its symbol.
std::optional<json> lower_shape_of(htp::NodeRef e, const Env &env) {
  htp::NodeRef base = e.child("value");
  if (!base.is("Attribute") || base.text("attr") != "shape") return std::nullopt;
  const TensorDecl *t = tensor_of(base.child("value"), env);
  if (!t) return std::nullopt;
  auto k = e.child("slice").int_constant();
  if (!k || *k < 0 || *k >= static_cast<int64_t>(t->shape.size()))
    fail(e.child("slice"), "'" + t->name + ".shape' has " + std::to_string(t->shape.size()) +
                               " entries; index it with a constant in range");
  return dim_expr(t->shape[*k]);
}

json lower_subscript(htp::NodeRef e, const Env &env) {
  if (auto dim = lower_shape_of(e, env)) return *dim;
  if (const TensorDecl *t = tensor_of(e.child("value"), env)) return lower_read(e, *t, env);
  fail(e,
       "only elements of integer tensor parameters (L[i]) and shapes (A.shape[0]) can be subscripted here");
}

json lower_call(htp::NodeRef e, const Env &env) {
  std::string callee = e.child("func").dotted_name();
  if ((callee == "min" || callee == "max") && e.size("args") >= 2 && e.size("keywords") == 0) {
    json acc = lower_expr(e.item("args", 0), env);
    for (size_t i = 1; i < e.size("args"); ++i)
      acc = make_op(callee, {acc, lower_expr(e.item("args", i), env)});
    return acc;
  }
  if (callee == "recv" || callee.ends_with(".recv"))  // (a pipe stage binding an item to a name: t = recv(a))
    fail(e, "a received item is not a workload value that a name can hold: pass recv(ch) directly as a launch "
            "argument (kernel[i](recv(ch), ...)), or take the channel's items with `for t in consume(ch):` and pass t");
  fail(e, "calls in workload expressions are limited to min(...) and max(...); " + describe(e) +
              " is not allowed here");
}

json lower_compare(htp::NodeRef e, const Env &env) {
  json left = lower_expr(e.child("left"), env);
  json result;
  for (size_t i = 0; i < e.size("ops"); ++i) {
    auto op = kCompareOps.find(std::string(e.item("ops", i).type()));
    if (op == kCompareOps.end())
      fail(e, "comparison '" + std::string(e.item("ops", i).type()) + "' is not supported");
    json right = lower_expr(e.item("comparators", i), env);
    json cmp = make_op(op->second, {left, right});
    result = result.is_null() ? cmp : make_op("and", {result, cmp});
    left = right;
  }
  return result;
}

} // namespace

bool is_integer_dtype(const std::string &dtype) {
  return dtype == "i8" || dtype == "i16" || dtype == "i32" || dtype == "i64" || dtype == "u8";
}

std::optional<int64_t> int_of(const json &e) {
  if (e.is_number_integer()) return e.get<int64_t>();
  return std::nullopt;
}

std::optional<int64_t> constant_int(htp::NodeRef e, const json &constants) {
  if (auto v = e.int_constant()) return v;
  if (e.is("Name")) {
    const json *c = constants.is_object() ? &constants : nullptr;
    auto it = c ? c->find(*e.text("id")) : constants.end();
    if (c && it != c->end() && it->is_number_integer() && !it->is_boolean()) return it->get<int64_t>();
    return std::nullopt;
  }
  if (e.is("UnaryOp") && e.child("op").is("USub")) {
    auto v = constant_int(e.child("operand"), constants);
    if (!v || *v == INT64_MIN) return std::nullopt;
    return -*v;
  }
  if (e.is("BinOp") && e.child("op").is("Pow")) {  // a size written 2 ** 20: constants only, in 64 bits
    auto a = constant_int(e.child("left"), constants), b = constant_int(e.child("right"), constants);
    return a && b ? htp::int_power(*a, *b) : std::nullopt;
  }
  if (e.is("BinOp")) {
    auto op = kBinOps.find(std::string(e.child("op").type()));
    if (op == kBinOps.end()) return std::nullopt;
    auto a = constant_int(e.child("left"), constants), b = constant_int(e.child("right"), constants);
    if (!a || !b) return std::nullopt;
    auto folded = fold_int(op->second, *a, *b);
    return folded ? int_of(*folded) : std::nullopt;
  }
  return std::nullopt;
}

json dim_expr(const json &dim) {
  return dim.is_string() ? json{{"param", dim}} : dim;
}

const TensorDecl *tensor_of(htp::NodeRef n, const Env &env) {
  if (!n.is("Name")) return nullptr;
  auto it = env.tensors.find(*n.text("id"));
  return it == env.tensors.end() ? nullptr : &it->second;
}

json make_op(const std::string &name, std::vector<json> args) {
  if (args.size() == 2) {
    auto a = int_of(args[0]), b = int_of(args[1]);
    if (a && b)
      if (auto folded = fold_int(name, *a, *b)) return *folded;
    if (auto s = simplify(name, args[0], args[1])) return *s;
  }
  if (name == "neg" && args.size() == 1)
    if (auto a = int_of(args[0])) return json(-*a);
  if (auto folded = fold_bool(name, args)) return *folded;
  return json{{"op", name}, {"args", std::move(args)}};
}

std::optional<int64_t> constant_difference(const json &a, const json &b) {
  Affine d = affine(a);
  d.add(affine(b), -1);
  for (const auto &[k, c] : d.terms)
    if (c != 0) return std::nullopt;
  return d.constant;
}

namespace {

/// The Python spelling of an ast operator type ("Pow" -> "**"), for messages.
std::string python_operator(const std::string &type) {
  static const std::map<std::string, std::string> spelling = {
      {"Pow", "**"}, {"MatMult", "@"}, {"LShift", "<<"}, {"RShift", ">>"}, {"BitOr", "|"}, {"BitXor", "^"},
      {"BitAnd", "&"}, {"Invert", "~"}, {"Div", "/"}, {"Mod", "%"}, {"FloorDiv", "//"}, {"Add", "+"},
      {"Sub", "-"}, {"Mult", "*"}, {"UAdd", "+"}, {"USub", "-"}, {"Not", "not"}};
  auto it = spelling.find(type);
  return it == spelling.end() ? type : it->second;
}

}  // namespace

json lower_expr(htp::NodeRef e, const Env &env) {
  std::string_view type = e.type();
  if (type == "Constant") return lower_constant(e);
  if (type == "Name") return lower_name(e, env);
  if (type == "BinOp") {
    std::string op(e.child("op").type());
    auto it = kBinOps.find(op);
    if (it == kBinOps.end())
      fail(e, op == "Div" ? "'/' is true division; workload expressions are integer: use '//'"
                          : "operator '" + python_operator(op) + "' is not supported in workload expressions");
    json right = lower_expr(e.child("right"), env);
    if ((it->second == "floordiv" || it->second == "mod") && int_of(right) == 0)
      fail(e, "division by zero in a workload expression");
    json left = lower_expr(e.child("left"), env);
    json out = make_op(it->second, {left, right});
    // Integer constants whose result leaves 64 bits stay unfolded: pto-a2a3sim wrapped them, aie-npu1 refused
    // them at run time.
    if (int_of(left) && int_of(right) && !int_of(out) &&
        (it->second == "add" || it->second == "sub" || it->second == "mul"))
      fail(e, "'" + python_operator(op) + "' of the constants " + left.dump() + " and " + right.dump() +
                  " overflows 64 bits, the width workload expressions are computed in");
    return out;
  }
  if (type == "UnaryOp") {
    std::string op(e.child("op").type());
    json v = lower_expr(e.child("operand"), env);
    if (op == "USub") return make_op("neg", {v});
    if (op == "Not") return make_op("not", {v});
    if (op == "UAdd") return v;
    fail(e, "operator '" + python_operator(op) + "' is not supported in workload expressions");
  }
  if (type == "BoolOp") {
    std::string op = e.child("op").is("And") ? "and" : "or";
    json acc = lower_expr(e.item("values", 0), env);
    for (size_t i = 1; i < e.size("values"); ++i)
      acc = make_op(op, {acc, lower_expr(e.item("values", i), env)});
    return acc;
  }
  if (type == "Compare") return lower_compare(e, env);
  if (type == "IfExp")
    return make_op("select", {lower_expr(e.child("test"), env), lower_expr(e.child("body"), env),
                              lower_expr(e.child("orelse"), env)});
  if (type == "Subscript") return lower_subscript(e, env);
  if (type == "Call") return lower_call(e, env);
  fail(e, describe(e) + " cannot be used in a workload expression");
}

} // namespace wsp
