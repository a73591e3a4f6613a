#include "types.hpp"

#include <map>
#include <set>
#include <vector>

#include <htp/expr_eval.hpp>

namespace csp {

namespace {

const std::set<std::string> &dtypes() {
  static const std::set<std::string> d = {"f16", "bf16", "f32", "i8", "i16", "i32", "i64", "u8"};
  return d;
}

/// The subscript's index expressions (a Tuple's elements, or the single index).
std::vector<htp::NodeRef> indices(htp::NodeRef subscript) {
  htp::NodeRef s = subscript.child("slice");
  if (s.is("Tuple")) return s.items("elts");
  return {s};
}

/// A dimension: an int, a captured int constant, or integer arithmetic of those (`R * T`, `N // 2`), as
/// kernel and workload parameters take them.
std::optional<Json> dim_of(htp::NodeRef n, const Json &constants, std::string &why) {
  if (auto v = n.int_constant()) return *v;
  if (n.is("Name")) {
    std::string id = n.text("id").value_or("");
    if (constants.contains(id) && constants[id].is_number_integer() && !constants[id].is_boolean()) return constants[id];
    why = "dimension '" + id + "' is not an integer constant";
    return std::nullopt;
  }
  static const std::map<std::string, std::string> ops = {
      {"Add", "add"}, {"Sub", "sub"}, {"Mult", "mul"}, {"FloorDiv", "floordiv"}, {"Mod", "mod"}};
  std::vector<int64_t> operands;
  std::string op;
  if (n.is("BinOp") && ops.count(std::string(n.child("op").type()))) {
    op = ops.at(std::string(n.child("op").type()));
    for (const char *side : {"left", "right"}) {
      auto v = dim_of(n.child(side), constants, why);
      if (!v) return std::nullopt;
      operands.push_back(v->get<int64_t>());
    }
  } else if (n.is("UnaryOp") && n.child("op").is("USub")) {
    op = "neg";
    auto v = dim_of(n.child("operand"), constants, why);
    if (!v) return std::nullopt;
    operands.push_back(v->get<int64_t>());
  } else {
    why = "a dimension must be an integer, an integer constant or integer arithmetic of those (R * 2)";
    return std::nullopt;
  }
  std::string fault;
  auto v = htp::expr_detail::apply(op, operands, &fault);
  if (!v) {
    why = "the dimension cannot be computed: " + fault;
    return std::nullopt;
  }
  return *v;
}

std::optional<Json> shaped(const std::string &kind, htp::NodeRef sub, const Json &constants,
                           std::string &why) {
  auto idx = indices(sub);
  if (idx.size() < 2 || (kind == "tile" && idx.size() != 3)) {
    why = kind == "tile" ? "Tile takes [rows, cols, dtype]" : "Tensor takes [dim, ..., dtype]";
    return std::nullopt;
  }
  std::string dt = surface_name(idx.back());
  if (!dtypes().count(dt)) {
    why = "unknown dtype '" + dt + "' (expected one of f16 bf16 f32 i8 i16 i32 i64 u8)";
    return std::nullopt;
  }
  Json shape = Json::array();
  for (size_t i = 0; i + 1 < idx.size(); ++i) {
    auto d = dim_of(idx[i], constants, why);
    if (!d) return std::nullopt;
    shape.push_back(*d);
  }
  return Json{{"kind", kind}, {"shape", shape}, {"dtype", dt}};
}

} // namespace

std::optional<Json> type_of(htp::NodeRef a, const Json &constants, std::string &why) {
  if (a && a.is("BinOp") && a.child("op").is("MatMult")) {  // T @ Layout(...)
    why = "it has a layout, which a CSP program's parameters do not take: layouts go on the parameters of the "
          "@kernel functions it runs (docs/dialects/layout-axe.md); write the tensor type alone";
    return std::nullopt;
  }
  if (a.is("Subscript")) {
    std::string head = surface_name(a.child("value"));
    if (head == "Tile") return shaped("tile", a, constants, why);
    if (head == "Tensor") return shaped("tensor", a, constants, why);
    if (head == "Scalar") {
      std::string dt = surface_name(a.child("slice"));
      if (dtypes().count(dt)) return Json{{"kind", "scalar"}, {"dtype", dt}};
      why = "unknown dtype '" + dt + "'";
      return std::nullopt;
    }
    if (head == "Constexpr") return Json{{"kind", "constexpr"}, {"value", nullptr}};
    why = "'" + head + "[...]' is not a tile type";
    return std::nullopt;
  }
  std::string name = surface_name(a);
  if (name == "int") return Json{{"kind", "scalar"}, {"dtype", "i64"}};
  if (name == "float") return Json{{"kind", "scalar"}, {"dtype", "f32"}};
  if (name == "bool") return Json{{"kind", "scalar"}, {"dtype", "i8"}};
  if (name == "Constexpr") return Json{{"kind", "constexpr"}, {"value", nullptr}};
  if (dtypes().count(name)) return Json{{"kind", "scalar"}, {"dtype", name}};
  why = a ? "'" + (name.empty() ? std::string(a.type()) : name) + "' is not a tile type"
          : "a type annotation is missing";
  return std::nullopt;
}

std::optional<ParamType> param_type_of(htp::NodeRef a, const Json &constants, std::string &why) {
  static const std::map<std::string, std::string> dirs = {{"In", "in"}, {"Out", "out"}, {"InOut", "inout"}};
  ParamType p;
  if (a && a.is("BinOp") && a.child("op").is("MatMult")) {  // In[...] @ Layout(...): type_of says why
    (void)type_of(a, constants, why);
    return std::nullopt;
  }
  if (a.is("Subscript")) {
    auto it = dirs.find(surface_name(a.child("value")));
    if (it != dirs.end()) {
      p.dir = it->second;
      a = a.child("slice");
    }
  }
  auto t = type_of(a, constants, why);
  if (!t) return std::nullopt;
  p.type = *t;
  return p;
}

Json received_type(const Json &elem) {
  if (!elem.is_object() || elem.value("kind", "") != "tensor" || !elem.contains("shape") || !elem["shape"].is_array())
    return elem;
  const Json &shape = elem["shape"];
  if (shape.empty() || shape.size() > 2) return elem;
  Json tile = elem;
  tile["kind"] = "tile";
  tile["shape"] = shape.size() == 1 ? Json::array({1, shape[0]}) : shape;
  return tile;
}

} // namespace csp
