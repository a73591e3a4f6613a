#include "signature.hpp"

#include "expr.hpp"

#include <set>

namespace wsp {

namespace {

const std::set<std::string> kDtypes = {"f16", "bf16", "f32", "i8", "i16", "i32", "i64", "u8"};

[[noreturn]] void fail_type(htp::NodeRef at, const std::string &message) {
  throw WspError(at, "wsp.type", message);
}

std::string dtype_of(htp::NodeRef n) {
  std::string name = last_name(n.dotted_name());
  if (!kDtypes.count(name)) fail_type(n, describe(n) + " is not a dtype (one of f16 bf16 f32 i8 i16 i32 i64 u8)");
  return name;
}

bool is_identifier(const std::string &s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

/// A dimension: a positive int, an integer expression of literals and captured int constants (`2 * R`), or
/// a symbol string ("S") bound at run time.
json dim_of(htp::NodeRef n, const json &constants) {
  if (auto v = constant_int(n, constants)) {
    if (*v <= 0) fail_type(n, "a tensor dimension must be positive, got " + std::to_string(*v));
    return *v;
  }
  if (n.is("Constant")) {
    auto c = n.constant();
    if (c && c->kind == HTP_CONST_STR) {
      std::string sym = htp::from_htp_str(c->text);
      if (!is_identifier(sym)) fail_type(n, "a symbolic dimension must be an identifier, got '" + sym + "'");
      return sym;
    }
  }
  fail_type(n, "a tensor dimension is a positive int, an integer expression of int literals and captured int "
          "constants (2 * R) or a symbol such as \"S\"; got " + describe(n));
}

/// `Wrapper[inner]` → (wrapper's last name, inner), else ("", n).
std::pair<std::string, htp::NodeRef> unwrap(htp::NodeRef n) {
  if (!n.is("Subscript")) return {"", n};
  return {last_name(n.child("value").dotted_name()), n.child("slice")};
}

json scalar_type(htp::NodeRef n) {
  auto [head, inner] = unwrap(n);
  if (head == "Scalar") return json{{"kind", "scalar"}, {"dtype", dtype_of(inner)}};
  std::string name = n.dotted_name();
  if (name == "int") return json{{"kind", "scalar"}, {"dtype", "i64"}};
  if (name == "bool") return json{{"kind", "scalar"}, {"dtype", "i8"}};
  if (name == "float") return json{{"kind", "scalar"}, {"dtype", "f32"}};
  fail_type(n, "a workload parameter is a Tensor[...], a Scalar[dtype] or an int, optionally inside In/Out/InOut; "
          "got " +
              describe(n));
}

} // namespace

json parse_tensor_type(htp::NodeRef annotation, const json &constants) {
  auto [head, inner] = unwrap(annotation);
  if (head != "Tensor") fail_type(annotation, "expected Tensor[d0, ..., dtype], got " + describe(annotation));
  std::vector<htp::NodeRef> parts =
      inner.is("Tuple") ? inner.items("elts") : std::vector<htp::NodeRef>{inner};
  if (parts.size() < 2) fail_type(annotation, "Tensor[...] needs at least one dimension and a dtype");
  json shape = json::array();
  for (size_t i = 0; i + 1 < parts.size(); ++i)
    shape.push_back(dim_of(parts[i], constants));
  return json{{"kind", "tensor"}, {"shape", shape}, {"dtype", dtype_of(parts.back())}};
}

json parse_workload_param(htp::NodeRef arg, const json &constants, std::vector<WspError> *layout_errors) {
  std::string name = *arg.text("arg");
  htp::NodeRef ann = arg.child("annotation");
  if (!ann) return json{{"name", name}, {"dir", "in"}, {"type", {{"kind", "scalar"}, {"dtype", "i64"}}}};
  // `T @ Layout(...)`, around or inside In/Out/InOut: layouts type the parameters of kernels, not workloads.
  auto strip_layout = [&](htp::NodeRef n) {
    if (!n.is("BinOp") || !n.child("op").is("MatMult")) return n;
    WspError e(n, "wsp.layout",
               "parameter '" + name + "' of a workload has a layout; layouts go on the parameters of the "
               "@kernel functions it launches (docs/dialects/layout-axe.md): write the workload's tensor type alone");
    if (!layout_errors) throw e;
    layout_errors->push_back(std::move(e));
    return n.child("left");
  };
  ann = strip_layout(ann);
  std::string dir = "in";
  auto [head, inner] = unwrap(ann);
  if (head == "In" || head == "Out" || head == "InOut") {
    dir = head == "In" ? "in" : head == "Out" ? "out" : "inout";
    ann = strip_layout(inner);
  }
  json type = unwrap(ann).first == "Tensor" ? parse_tensor_type(ann, constants) : scalar_type(ann);
  if (type["kind"] == "scalar" && dir != "in")
    fail_type(arg, "scalar parameter '" + name + "' cannot be " + head + "[...]: a workload reads its scalars");
  return json{{"name", name}, {"dir", dir}, {"type", type}};
}

TensorDecl tensor_decl(const json &param, bool intermediate) {
  return TensorDecl{param["name"], param.value("dir", "inout"), param["type"]["dtype"],
                    param["type"]["shape"], intermediate};
}

json kernel_signature(htp::NodeRef kernel, htp::NodeRef call) {
  std::string name = *kernel.text("name");
  auto text = kernel.attr("tile.signature");
  if (!text)
    throw WspError(call, "wsp.kernel",
                   "kernel '" + name +
                       "' has no tile.signature: the tile plugin's typecheck pass must run first");
  json sig = json::parse(*text, nullptr, false);
  bool ok = sig.is_object() && sig.contains("params") && sig["params"].is_array();
  for (const auto &p : ok ? sig["params"] : json::array()) {
    ok = ok && p.is_object() && p.contains("name") && p["name"].is_string() && p.contains("type") &&
         p["type"].is_object() && p["type"].contains("kind") && p["type"]["kind"].is_string();
    if (ok && p["type"]["kind"] == "tensor") {
      const json &t = p["type"];
      ok = t.contains("dtype") && t["dtype"].is_string() && t.contains("shape") && t["shape"].is_array() &&
           !t["shape"].empty();
      for (const auto &d : ok ? t["shape"] : json::array())
        ok = ok && d.is_number_integer() && d.get<int64_t>() > 0;
    }
  }
  if (!ok)
    throw WspError(call, "wsp.kernel", "the tile.signature of kernel '" + name + "' is malformed: " + *text);
  return sig;
}

} // namespace wsp
