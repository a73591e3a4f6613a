#include "expr.hpp"

#include <algorithm>
#include <cstdint>

namespace htp::aie {

std::string expr_to_cpp(const Json &e, const std::function<std::string(const Json &leaf)> &name,
                        const std::string &where) {
  if (e.is_boolean()) return e.get<bool>() ? "1" : "0";
  if (e.is_number_integer()) return "int64_t(" + std::to_string(e.get<int64_t>()) + ")";
  if (e.is_number_float()) return e.dump();
  if (!e.is_object()) return "0";
  if (e.contains("var") || e.contains("param") || e.contains("read")) return name(e);
  const std::string op = e.value("op", "");
  std::vector<std::string> a;
  for (const auto &x : e.value("args", Json::array())) a.push_back(expr_to_cpp(x, name, where));
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
  const std::string at = where.empty() ? "" : ", " + where;
  if (op == "floordiv" && a.size() == 2) return "htp_floordiv(" + a[0] + ", " + a[1] + at + ")";
  if (op == "mod" && a.size() == 2) return "htp_mod(" + a[0] + ", " + a[1] + at + ")";
  if (op == "min" && a.size() == 2) return "htp_min(" + a[0] + ", " + a[1] + ")";
  if (op == "max" && a.size() == 2) return "htp_max(" + a[0] + ", " + a[1] + ")";
  if (op == "neg" && a.size() == 1) return "(-" + a[0] + ")";
  if (op == "not" && a.size() == 1) return "(!" + a[0] + ")";
  if (op == "select" && a.size() == 3) return "(" + a[0] + " ? " + a[1] + " : " + a[2] + ")";
  return "0";
}

}  // namespace htp::aie
