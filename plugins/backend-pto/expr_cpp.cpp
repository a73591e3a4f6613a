#include "expr_cpp.hpp"

#include <cstdio>
#include <map>

#include <htp/expr_eval.hpp>

#include "kernel_ir.hpp"

namespace ptobe {

std::string literal_cpp(const nlohmann::json &v) {
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    if (i >= INT32_MIN && i <= INT32_MAX) return std::to_string(i);
    return "INT64_C(" + std::to_string(i) + ")";
  }
  if (v.is_number_float()) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
    std::string s = buf;
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
  }
  throw IrError("expected a numeric literal, found " + v.dump());
}

namespace {

const std::map<std::string, std::string> kInfix = {
    {"add", "+"}, {"sub", "-"}, {"mul", "*"}, {"lt", "<"}, {"le", "<="}, {"eq", "=="},
    {"ne", "!="}, {"gt", ">"}, {"ge", ">="}, {"and", "&&"}, {"or", "||"}};
const std::map<std::string, std::string> kHelper = {
    {"floordiv", "htp_floordiv"}, {"mod", "htp_mod"}, {"min", "htp_min"}, {"max", "htp_max"}};

}  // namespace

std::string expr_to_cpp(const nlohmann::json &e, const ExprNames &names) {
  if (e.is_number() || e.is_boolean()) return literal_cpp(e);
  if (!e.is_object()) throw IrError("malformed expression " + e.dump());
  if (e.contains("var")) return names.var(e["var"].get<std::string>());
  if (e.contains("param")) return names.param(e["param"].get<std::string>());
  if (e.contains("read")) {
    std::vector<std::string> idx;
    for (const auto &i : e.value("index", nlohmann::json::array())) idx.push_back(expr_to_cpp(i, names));
    return names.read(e["read"].get<std::string>(), idx);
  }
  if (!e.contains("op") || !e.contains("args") || !e["args"].is_array())
    throw IrError("malformed expression " + e.dump());
  const std::string op = e["op"].get<std::string>();
  std::vector<std::string> a;
  for (const auto &x : e["args"]) a.push_back(expr_to_cpp(x, names));
  auto arity = [&](size_t n) {
    if (a.size() != n) throw IrError("expression '" + op + "' takes " + std::to_string(n) + " operands: " + e.dump());
  };
  if (names.checked && (op == "add" || op == "sub" || op == "mul")) {
    arity(2);
    return "htp_" + op + "(" + a[0] + ", " + a[1] + (names.where.empty() ? "" : ", " + names.where) + ")";
  }
  if (auto it = kInfix.find(op); it != kInfix.end()) {
    arity(2);
    return "(" + a[0] + " " + it->second + " " + a[1] + ")";
  }
  if (auto it = kHelper.find(op); it != kHelper.end()) {
    arity(2);
    const bool divides = op == "floordiv" || op == "mod";
    return it->second + "(" + a[0] + ", " + a[1] + (divides && !names.where.empty() ? ", " + names.where : "") + ")";
  }
  if (op == "neg" || op == "not") {
    arity(1);
    return std::string(op == "neg" ? "(-" : "(!") + a[0] + ")";
  }
  if (op == "select") {
    arity(3);
    return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
  }
  throw IrError("unknown expression operator '" + op + "'");
}

std::string expr_helpers_cpp() { return htp::kScalarHelpersCpp; }

}  // namespace ptobe
