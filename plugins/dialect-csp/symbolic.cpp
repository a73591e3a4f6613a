#include "symbolic.hpp"

#include <algorithm>
#include <map>

#include <htp/expr_eval.hpp>

namespace csp {

Poly Poly::constant(int64_t c) {
  Poly p;
  p.add_term({}, c);
  return p;
}

Poly Poly::atom(const Json &expr) {
  Poly p;
  p.add_term({expr.dump()}, 1);
  return p;
}

void Poly::add_term(const Monomial &m, int64_t c) {
  if (c == 0) return;
  int64_t &slot = terms_[m];
  slot += c;
  if (slot == 0) terms_.erase(m);
}

Poly Poly::operator+(const Poly &o) const {
  Poly r = *this;
  for (const auto &[m, c] : o.terms_)
    r.add_term(m, c);
  return r;
}

Poly Poly::operator-(const Poly &o) const {
  Poly r = *this;
  for (const auto &[m, c] : o.terms_)
    r.add_term(m, -c);
  return r;
}

Poly Poly::operator*(const Poly &o) const {
  Poly r;
  for (const auto &[ma, ca] : terms_)
    for (const auto &[mb, cb] : o.terms_) {
      Monomial m = ma;
      m.insert(m.end(), mb.begin(), mb.end());
      std::sort(m.begin(), m.end());
      r.add_term(m, ca * cb);
    }
  return r;
}

std::optional<int64_t> Poly::constant_value() const {
  if (terms_.empty()) return 0;
  if (terms_.size() == 1 && terms_.begin()->first.empty()) return terms_.begin()->second;
  return std::nullopt;
}

std::optional<Poly> Poly::divided_by(int64_t k) const {
  if (k == 0) return std::nullopt;
  Poly r;
  for (const auto &[m, c] : terms_) {
    if (c % k != 0) return std::nullopt;
    r.add_term(m, c / k);
  }
  return r;
}

Poly Poly::substitute(const std::string &key, const Poly &with) const {
  Poly r;
  for (const auto &[m, c] : terms_) {
    Poly term = Poly::constant(c);
    for (const auto &a : m) {
      if (a == key) {
        term = term * with;
      } else {
        Poly one;
        one.add_term({a}, 1);
        term = term * one;
      }
    }
    r = r + term;
  }
  return r;
}

bool Poly::has_atom(const std::function<bool(const Json &)> &pred) const {
  for (const auto &[m, c] : terms_)
    for (const auto &a : m)
      if (pred(Json::parse(a))) return true;
  return false;
}

std::optional<int64_t>
Poly::evaluate(const std::function<std::optional<int64_t>(const Json &)> &atom_value) const {
  int64_t sum = 0;
  for (const auto &[m, c] : terms_) {
    int64_t prod = c;
    for (const auto &a : m) {
      auto v = atom_value(Json::parse(a));
      if (!v) return std::nullopt;
      prod *= *v;
    }
    sum += prod;
  }
  return sum;
}

namespace {

Json monomial_expr(const Poly::Monomial &m, int64_t c) {
  std::vector<Json> factors;
  if (c != 1 || m.empty()) factors.push_back(c);
  for (const auto &a : m)
    factors.push_back(Json::parse(a));
  if (factors.size() == 1) return factors[0];
  return Json{{"op", "mul"}, {"args", factors}};
}

std::string atom_text(const Json &a) {
  if (a.is_object() && a.contains("param")) return a["param"].get<std::string>();
  if (a.is_object() && a.contains("var")) return a["var"].get<std::string>();
  if (a.is_object() && a.contains("stream")) return "len(" + a["stream"].get<std::string>() + ")";
  if (a.is_object() && a.contains("op") && a["args"].is_array() && a["args"].size() == 2) {
    static const std::map<std::string, std::string> infix = {{"floordiv", " // "}, {"mod", " % "}};
    auto it = infix.find(a["op"].get<std::string>());
    if (it != infix.end())
      return "(" + poly_of(a["args"][0]).to_text() + it->second + poly_of(a["args"][1]).to_text() + ")";
    return a["op"].get<std::string>() + "(" + poly_of(a["args"][0]).to_text() + ", " +
           poly_of(a["args"][1]).to_text() + ")";
  }
  return a.dump();
}

} // namespace

Json Poly::to_expr() const {
  if (terms_.empty()) return 0;
  // Constant term last: `n + 1` rather than `1 + n`.
  std::vector<Json> parts;
  for (auto it = terms_.rbegin(); it != terms_.rend(); ++it)
    parts.push_back(monomial_expr(it->first, it->second));
  if (parts.size() == 1) return parts[0];
  return Json{{"op", "add"}, {"args", parts}};
}

std::string Poly::to_text() const {
  if (terms_.empty()) return "0";
  std::string out;
  for (auto it = terms_.rbegin(); it != terms_.rend(); ++it) {
    int64_t c = it->second;
    std::string mono;
    for (const auto &a : it->first)
      mono += (mono.empty() ? "" : "*") + atom_text(Json::parse(a));
    std::string body = mono.empty()
                           ? std::to_string(c < 0 ? -c : c)
                           : ((c == 1 || c == -1) ? mono : std::to_string(c < 0 ? -c : c) + "*" + mono);
    if (out.empty())
      out = (c < 0 ? "-" : "") + body;
    else
      out += (c < 0 ? " - " : " + ") + body;
  }
  return out;
}

Poly poly_of(const Json &e) {
  if (e.is_number_integer()) return Poly::constant(e.get<int64_t>());
  if (e.is_boolean()) return Poly::constant(e.get<bool>() ? 1 : 0);
  if (e.is_object() && e.contains("op") && e["args"].is_array()) {
    std::string op = e["op"];
    const Json &args = e["args"];
    if (op == "add" || op == "mul") {
      Poly r = Poly::constant(op == "add" ? 0 : 1);
      for (const auto &a : args)
        r = op == "add" ? r + poly_of(a) : r * poly_of(a);
      return r;
    }
    if (op == "sub" && args.size() == 2) return poly_of(args[0]) - poly_of(args[1]);
    if (op == "neg" && args.size() == 1) return Poly::constant(0) - poly_of(args[0]);
    if ((op == "floordiv" || op == "mod") && args.size() == 2) {
      auto a = poly_of(args[0]).constant_value(), b = poly_of(args[1]).constant_value();
      if (a && b && *b != 0) {
        int64_t q = *a / *b, r = *a % *b;
        if (r != 0 && ((r < 0) != (*b < 0))) --q, r += *b; // Python floor semantics
        return Poly::constant(op == "floordiv" ? q : r);
      }
    }
  }
  return Poly::atom(e);
}

std::optional<int64_t>
evaluate_expr(const Json &e, const std::function<std::optional<int64_t>(const std::string &)> &param_value) {
  if (e.is_number_integer()) return e.get<int64_t>();
  if (e.is_boolean()) return e.get<bool>() ? 1 : 0;
  if (!e.is_object()) return std::nullopt;
  if (e.contains("param")) return param_value(e["param"].get<std::string>());
  if (!e.contains("op") || !e["args"].is_array()) return std::nullopt;
  std::vector<int64_t> v;
  for (const auto &a : e["args"]) {
    auto x = evaluate_expr(a, param_value);
    if (!x) return std::nullopt;
    v.push_back(*x);
  }
  std::string op = e["op"];
  if (op == "add" || op == "mul") {
    int64_t r = op == "add" ? 0 : 1;
    for (auto x : v)
      r = op == "add" ? r + x : r * x;
    return r;
  }
  if (v.size() == 1 && op == "neg") return -v[0];
  if (v.size() != 2) return std::nullopt;
  if (op == "sub") return v[0] - v[1];
  if (op == "min") return std::min(v[0], v[1]);
  if (op == "max") return std::max(v[0], v[1]);
  if ((op == "floordiv" || op == "mod") && v[1] != 0) {
    int64_t q = v[0] / v[1], r = v[0] % v[1];
    if (r != 0 && ((r < 0) != (v[1] < 0))) --q, r += v[1];
    return op == "floordiv" ? q : r;
  }
  return std::nullopt;
}

std::optional<Json> expr_of(htp::NodeRef n, const ExprScope &scope, std::string &why) {
  if (auto v = n.int_constant()) return *v;
  if (n.is("Name")) {
    std::string id = n.text("id").value_or("");
    if (scope.loop_vars.count(id)) return Json{{"var", id}};
    if (scope.params.count(id)) return Json{{"param", id}};
    if (scope.constants && scope.constants->contains(id) && (*scope.constants)[id].is_number_integer())
      return (*scope.constants)[id];
    why = "'" + id + "' is not " +
          (scope.params.empty() && scope.loop_vars.empty()
               ? std::string("a module-level integer constant")
               : std::string("an integer constant, a scalar parameter or a loop variable"));
    return std::nullopt;
  }
  if (n.is("UnaryOp") && n.child("op").is("USub")) {
    auto a = expr_of(n.child("operand"), scope, why);
    if (!a) return std::nullopt;
    return Json{{"op", "neg"}, {"args", {*a}}};
  }
  if (n.is("BinOp") && n.child("op").is("Pow")) {  // 2 ** 20, of constants (an Expr has no power)
    auto a = expr_of(n.child("left"), scope, why);
    if (!a) return std::nullopt;
    auto b = expr_of(n.child("right"), scope, why);
    if (!b) return std::nullopt;
    auto power = a->is_number_integer() && b->is_number_integer()
                     ? htp::int_power(a->get<int64_t>(), b->get<int64_t>())
                     : std::nullopt;
    if (!power)
      why = "a power (**) is an integer operation between constants only, with an exponent >= 0, within 64 bits";
    return power ? std::optional<Json>(*power) : std::nullopt;
  }
  if (n.is("BinOp")) {
    static const std::map<std::string, std::string> ops = {
        {"Add", "add"}, {"Sub", "sub"}, {"Mult", "mul"}, {"FloorDiv", "floordiv"}, {"Mod", "mod"}};
    auto it = ops.find(std::string(n.child("op").type()));
    if (it == ops.end()) {
      why = "operator " + std::string(n.child("op").type()) + " is not an integer operation";
      return std::nullopt;
    }
    auto a = expr_of(n.child("left"), scope, why);
    if (!a) return std::nullopt;
    auto b = expr_of(n.child("right"), scope, why);
    if (!b) return std::nullopt;
    return Json{{"op", it->second}, {"args", {*a, *b}}};
  }
  if (n.is("Call") && n.child("func").is("Name") && n.size("args") == 2 && n.size("keywords") == 0) {
    std::string f = n.child("func").text("id").value_or("");
    if (f == "min" || f == "max") {
      auto a = expr_of(n.item("args", 0), scope, why);
      if (!a) return std::nullopt;
      auto b = expr_of(n.item("args", 1), scope, why);
      if (!b) return std::nullopt;
      return Json{{"op", f}, {"args", {*a, *b}}};
    }
  }
  static const std::map<std::string_view, const char *> kinds = {
      {"IfExp", "a conditional expression (a if c else b)"}, {"Call", "a call"}, {"Subscript", "a subscript"},
      {"Attribute", "an attribute"}, {"Compare", "a comparison"}, {"BoolOp", "a boolean expression"},
      {"Lambda", "a lambda"}, {"Tuple", "a tuple"}, {"List", "a list"}};
  auto kind = kinds.find(n.type());
  why = std::string(kind != kinds.end() ? kind->second : "a " + std::string(n.type())) + " is not an integer expression";
  return std::nullopt;
}

bool mentions_var(const Json &e) {
  if (e.is_object()) {
    if (e.contains("var")) return true;
    for (const auto &[k, v] : e.items())
      if (mentions_var(v)) return true;
  }
  if (e.is_array())
    for (const auto &v : e)
      if (mentions_var(v)) return true;
  return false;
}

} // namespace csp
