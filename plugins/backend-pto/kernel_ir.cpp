#include "kernel_ir.hpp"

namespace ptobe {

Span Span::from_json(const json &j) {
  Span s;
  if (!j.is_object()) return s;
  auto num = [&](const char *k) { return j.contains(k) && j[k].is_number_integer() ? j[k].get<uint32_t>() : 0u; };
  if (j.contains("file") && j["file"].is_string()) s.file = j["file"].get<std::string>();
  s.line = num("line");
  s.col = num("col");
  s.end_line = num("end_line");
  s.end_col = num("end_col");
  return s;
}

namespace {

[[noreturn]] void fail(const std::string &path, const std::string &what, const Span &span = {}) {
  throw IrError("malformed tile.kernels at " + path + ": " + what, span);
}

const json &need(const json &obj, const char *key, const std::string &path) {
  if (!obj.is_object() || !obj.contains(key)) fail(path, std::string("missing key '") + key + "'");
  return obj.at(key);
}

std::string text(const json &obj, const char *key, const std::string &path) {
  const json &v = need(obj, key, path);
  if (!v.is_string()) fail(path + "/" + key, "expected a string");
  return v.get<std::string>();
}

std::vector<int64_t> shape_of(const json &v, const std::string &path) {
  if (!v.is_array() || v.empty()) fail(path, "expected a non-empty list of dimensions");
  std::vector<int64_t> out;
  for (const auto &d : v) {
    if (!d.is_number_integer() || d.get<int64_t>() <= 0)
      fail(path, "kernel shapes are static positive integers, found " + d.dump());
    out.push_back(d.get<int64_t>());
  }
  return out;
}

Param parse_param(const json &p, const std::string &path) {
  Param out;
  out.name = text(p, "name", path);
  if (p.contains("dir") && p["dir"].is_string()) out.dir = p["dir"].get<std::string>();
  if (out.dir != "in" && out.dir != "out" && out.dir != "inout") fail(path + "/dir", "expected in, out or inout");
  const json &type = need(p, "type", path);
  out.kind = text(type, "kind", path + "/type");
  if (out.kind == "tensor") {
    const json &shape = p.contains("local_shape") && p["local_shape"].is_array() ? p["local_shape"] : need(type, "shape", path + "/type");
    out.shape = shape_of(shape, path + "/type/shape");
    out.dtype = text(type, "dtype", path + "/type");
  } else if (out.kind == "scalar") {
    out.dtype = text(type, "dtype", path + "/type");
  } else if (out.kind == "constexpr") {
    out.value = need(type, "value", path + "/type");
  } else {
    fail(path + "/type/kind", "expected tensor, scalar or constexpr, found '" + out.kind + "'");
  }
  return out;
}

Local parse_local(const json &l, const std::string &path) {
  Local out;
  out.name = text(l, "name", path);
  out.scalar = l.contains("kind") && l["kind"] == "scalar";
  if (!out.scalar) {
    out.shape = shape_of(need(l, "shape", path), path + "/shape");
    if (out.shape.size() > 2) fail(path + "/shape", "tiles are 1-D or 2-D");
    if (out.shape.size() == 1) out.shape.insert(out.shape.begin(), 1);
  }
  out.dtype = l.contains("dtype") && l["dtype"].is_string() ? l["dtype"].get<std::string>() : "i64";
  return out;
}

std::string normalise_op(std::string op) {
  for (const char *prefix : {"pto.", "tile."})
    if (op.rfind(prefix, 0) == 0) return op.substr(std::string(prefix).size());
  return op;
}

std::vector<Op> parse_body(const json &body, const std::string &path);

Op parse_op(const json &s, const std::string &path) {
  Op op;
  op.raw = s;
  op.op = normalise_op(text(s, "op", path));
  op.span = Span::from_json(s.value("span", json()));
  if (s.contains("set")) {
    if (!s["set"].is_string()) fail(path + "/set", "expected a string", op.span);
    op.set = s["set"].get<std::string>();
    if (op.set != "tile" && op.set != "pto")  // the resolver keeps other sets' obligations away from pto targets
      throw IrError("'" + op.set + "." + op.op + "' belongs to intrinsic set '" + op.set +
                        "'; backend-pto lowers the pto and portable (tile) intrinsics only",
                    op.span, "pto.unsupported");
  }
  if (s.contains("dst") && s["dst"].is_string()) op.dst = s["dst"].get<std::string>();
  if (s.contains("args")) {
    if (!s["args"].is_array()) fail(path + "/args", "expected a list", op.span);
    for (const auto &a : s["args"]) {
      if (a.is_string()) op.args.push_back(a.get<std::string>());
      else op.args.push_back(a.dump());  // a scalar Expr argument of a foreign op, kept as JSON text
    }
  }
  if (op.op == "for") op.body = parse_body(need(s, "body", path), path + "/body");
  if (op.op == "if") {
    op.then_body = parse_body(need(s, "then", path), path + "/then");
    if (s.contains("else")) op.else_body = parse_body(s["else"], path + "/else");
  }
  return op;
}

std::vector<Op> parse_body(const json &body, const std::string &path) {
  if (!body.is_array()) fail(path, "expected a list of statements");
  std::vector<Op> out;
  for (size_t i = 0; i < body.size(); ++i) out.push_back(parse_op(body[i], path + "/" + std::to_string(i)));
  return out;
}

}  // namespace

const Param *Kernel::param(const std::string &n) const {
  for (const Param &p : params)
    if (p.name == n) return &p;
  return nullptr;
}

const Local *Kernel::local(const std::string &n) const {
  for (const Local &l : locals)
    if (l.name == n) return &l;
  return nullptr;
}

std::vector<const Param *> Kernel::tensor_params() const {
  std::vector<const Param *> out;
  for (const Param &p : params)
    if (p.is_tensor()) out.push_back(&p);
  return out;
}

std::vector<const Param *> Kernel::scalar_params() const {
  std::vector<const Param *> out;
  for (const Param &p : params)
    if (p.is_scalar()) out.push_back(&p);
  return out;
}

std::vector<Kernel> parse_tile_kernels(const json &doc) {
  const std::string schema = doc.is_object() && doc.contains("schema") && doc["schema"].is_string()
                                 ? doc["schema"].get<std::string>() : std::string();
  if (schema.rfind("htp.tile.kernels.v1", 0) != 0)
    throw IrError("tile.kernels has schema '" + schema + "', expected htp.tile.kernels.v1");
  std::vector<Kernel> out;
  const json &kernels = need(doc, "kernels", "");
  if (!kernels.is_array()) fail("/kernels", "expected a list");
  for (size_t i = 0; i < kernels.size(); ++i) {
    const std::string path = "/kernels/" + std::to_string(i);
    const json &k = kernels[i];
    Kernel kernel;
    kernel.name = text(k, "name", path);
    if (k.contains("kind") && k["kind"].is_string()) kernel.kind = k["kind"].get<std::string>();
    kernel.span = Span::from_json(k.value("span", json()));
    const json &params = need(k, "params", path);
    for (size_t j = 0; j < params.size(); ++j)
      kernel.params.push_back(parse_param(params[j], path + "/params/" + std::to_string(j)));
    if (k.contains("locals"))
      for (size_t j = 0; j < k["locals"].size(); ++j)
        kernel.locals.push_back(parse_local(k["locals"][j], path + "/locals/" + std::to_string(j)));
    kernel.body = parse_body(need(k, "body", path), path + "/body");
    out.push_back(std::move(kernel));
  }
  return out;
}

}  // namespace ptobe
