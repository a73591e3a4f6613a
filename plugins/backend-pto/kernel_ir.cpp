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

Span Span::from(const std::optional<htp::IrSpan> &s) {
  if (!s) return {};
  return Span{s->file.value_or(""), s->line, s->col, s->end_line, s->end_col};
}

IrError ir_error(const htp::IrDocumentError &e) { return IrError(e.what(), Span::from(e.span())); }

namespace {

Param pto_param(const htp::TileParam &p, const htp::TileKernel &k) {
  Param out;
  out.name = p.name;
  out.dir = p.dir;
  out.kind = p.type.kind;
  if (p.type.is_tile())
    throw IrError("parameter '" + p.name + "' of '" + k.name + "' is a tile; backend-pto takes tensor, scalar and "
                                                                 "constexpr parameters",
                  Span::from(k.span));
  if (p.type.is_tensor()) out.shape = p.body_shape(), out.global_shape = p.type.shape;
  out.dtype = p.type.dtype;
  out.value = p.type.value;
  return out;
}

Local pto_local(const htp::TileLocal &l) { return Local{l.name, l.shape, l.dtype, l.is_scalar()}; }

std::string normalise_op(std::string op) {
  for (const char *prefix : {"pto.", "tile."})
    if (op.rfind(prefix, 0) == 0) return op.substr(std::string(prefix).size());
  return op;
}

std::vector<Op> pto_body(const std::vector<htp::TileOp> &body);

Op pto_op(const htp::TileOp &s) {
  Op op;
  op.op = normalise_op(s.op);
  op.span = Span::from(s.span);
  if (s.set) {
    op.set = *s.set;
    if (op.set != "tile" && op.set != "pto")  // the resolver keeps other sets' obligations away from pto targets
      throw IrError("'" + op.set + "." + op.op + "' belongs to intrinsic set '" + op.set +
                        "'; backend-pto lowers the pto and portable (tile) intrinsics only",
                    op.span, "pto.unsupported");
  }
  op.dst = s.dst.value_or("");
  if (s.args)
    for (const json &a : *s.args) op.args.push_back(a.is_string() ? a.get<std::string>() : a.dump());
  op.body = pto_body(s.body);
  op.then_body = pto_body(s.then_body);
  op.else_body = pto_body(s.else_body);
  op.ir = s.shallow();
  return op;
}

std::vector<Op> pto_body(const std::vector<htp::TileOp> &body) {
  std::vector<Op> out;
  out.reserve(body.size());
  for (const htp::TileOp &s : body) out.push_back(pto_op(s));
  return out;
}

htp::TileOp tile_op(const Op &o) {
  htp::TileOp s = o.ir;
  for (const Op &b : o.body) s.body.push_back(tile_op(b));
  for (const Op &b : o.then_body) s.then_body.push_back(tile_op(b));
  for (const Op &b : o.else_body) s.else_body.push_back(tile_op(b));
  return s;
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

std::vector<Kernel> pto_kernels(const htp::TileKernels &doc) {
  std::vector<Kernel> out;
  for (const htp::TileKernel &k : doc.kernels) {
    Kernel kernel;
    kernel.name = k.name;
    kernel.kind = k.kind;
    kernel.span = Span::from(k.span);
    for (const htp::TileParam &p : k.params) kernel.params.push_back(pto_param(p, k));
    for (const htp::TileLocal &l : k.locals) kernel.locals.push_back(pto_local(l));
    kernel.body = pto_body(k.body);
    out.push_back(std::move(kernel));
  }
  return out;
}

json op_json(const Op &o) { return json(tile_op(o)); }

}  // namespace ptobe
