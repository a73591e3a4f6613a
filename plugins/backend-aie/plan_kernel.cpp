// Front-end for kernels with a grid: `@kernel(mapping=[P0, P1])` places one core per mesh coordinate;
// each tensor parameter's layout (layout.signatures) gives the view every core works on.
#include <algorithm>
#include <functional>
#include <utility>
#include <sstream>

#include <htp/mem_placement.hpp>

#include "entry_plan.hpp"
#include "kernel_emitter.hpp"

namespace htp::aie {

namespace {

std::optional<size_t> mesh_axis(const std::string &axis) {
  static const char *names[] = {"mesh.x", "mesh.y", "mesh.z", "mesh.w"};
  for (size_t i = 0; i < 4; ++i)
    if (axis == names[i]) return i;
  if (axis.rfind("mesh.", 0) == 0) {
    try {
      return std::stoul(axis.substr(5));
    } catch (...) {
    }
  }
  return std::nullopt;
}

/// The multi-index of core `l` over the mesh (row-major).
std::vector<int64_t> mesh_coord(int64_t l, const std::vector<int64_t> &mesh) {
  std::vector<int64_t> m(mesh.size());
  for (size_t i = mesh.size(); i-- > 0;) {
    m[i] = l % mesh[i];
    l /= mesh[i];
  }
  return m;
}

struct TensorParam {
  RuntimeParam rp;
  std::vector<int64_t> local;
  std::optional<htp::Layout> layout;  // none: replicated
  std::vector<int64_t> strides;  // local memory strides of the `mem` facet; empty: row-major
  std::vector<int64_t> levels;   // the extents `strides` go with: the local shape, or a tiled layout's iters
  std::vector<int64_t> order;    // object element k holds local row-major element order[k]; empty: row-major
};

std::string list_text(const std::vector<int64_t> &v) { return Json(v).dump(); }

/// Whether every run of `kernel` stores every element of its parameter `param` (of local shape `local`): the
/// stores at the top or in loops of static bounds, at offsets known at compile time, cover it together (an
/// `if` covers what both its branches store). A core's output object goes back whole, so an Out parameter
/// they do not cover is moved in first, like an InOut: the elements the body does not store keep the caller's
/// values, as on Ascend.
bool stores_whole(const htp::TileKernel &kernel, const std::string &param, const std::vector<int64_t> &local) {
  const int64_t n = product(local);
  if (n <= 0 || n > (int64_t{1} << 22)) return false;
  std::vector<char> stored(static_cast<size_t>(n), 0);
  ExprEnv env = constexpr_env(kernel);
  int64_t budget = int64_t{1} << 20;  // statements visited (loops of static bounds are walked through)
  std::function<void(const std::vector<htp::TileOp> &)> walk = [&](const std::vector<htp::TileOp> &ops) {
    for (const htp::TileOp &o : ops) {
      if (--budget < 0) return;
      if (o.is("for")) {
        const auto r = htp::loop_detail::static_range(o, env);
        if (!r || !o.var) continue;
        for (int64_t t = 0; t < r->trips && budget >= 0; ++t) {
          env.vars[*o.var] = r->start + t * r->step;
          walk(o.body);
        }
        env.vars.erase(*o.var);
        continue;
      }
      if (o.is("if")) {  // the elements both branches store
        std::vector<char> before = stored;
        walk(o.then_body);
        std::vector<char> then = std::exchange(stored, before);
        walk(o.else_body);
        for (size_t e = 0; e < stored.size(); ++e) stored[e] = stored[e] && then[e];
        continue;
      }
      if (!o.is("store") || o.dst != param || !o.offset) continue;
      const htp::TileLocal *l = kernel.local(o.moved_register().value_or(""));
      if (!l || l->shape.size() != 2 || o.offset->size() != local.size()) continue;
      const std::vector<int64_t> ext = htp::view_extents(l->shape[0], l->shape[1], local.size());
      std::vector<int64_t> lo;
      for (const Json &x : *o.offset)
        if (auto v = eval_int(x, env)) lo.push_back(*v);
      if (lo.size() != local.size()) continue;
      bool inside = true;
      for (size_t d = 0; d < lo.size(); ++d) inside = inside && lo[d] >= 0 && lo[d] + ext[d] <= local[d];
      if (!inside) continue;
      // (the box's elements, row-major)
      std::vector<int64_t> at(lo.size(), 0);
      while (true) {
        int64_t flat = 0;
        for (size_t d = 0; d < lo.size(); ++d) flat = flat * local[d] + lo[d] + at[d];
        stored[static_cast<size_t>(flat)] = 1;
        size_t d = lo.size();
        while (d-- > 0 && ++at[d] == ext[d]) at[d] = 0;
        if (d == static_cast<size_t>(-1)) break;
      }
    }
  };
  walk(kernel.body);
  return budget >= 0 && std::all_of(stored.begin(), stored.end(), [](char c) { return c != 0; });
}

/// Reads the layout's `mem` facet into local memory strides and the object order; false (with a problem)
/// for what a DMA cannot produce: swizzles, packing, banks, and strides that are not a dense permutation
/// of the local elements (holes or overlaps).
bool read_mem_facet(TensorParam &t, const std::string &kernel, const Json &span, std::vector<Problem> &problems) {
  if (!t.layout) return true;
  const htp::LayoutMem &mem = t.layout->mem;
  const std::string what = "the memory layout of '" + t.rp.name + "' of kernel '" + kernel + "'";
  auto bad = [&](const std::string &why) {
    problems.push_back({"aie.layout-mem", what + " " + why, span});
    return false;
  };
  if (!mem.swizzle.is_null())
    return bad("swizzles addresses (" + mem.swizzle.dump() + "); AIE DMAs move affine 4-D patterns only");
  if (!mem.pack.is_null() && mem.pack != Json(1))
    return bad("packs " + mem.pack.dump() + " elements per word; AIE objects hold unpacked elements");
  if (!mem.banks.empty())
    return bad("places it in memory banks; MLIR-AIE allocates the object FIFO buffers of a tile itself");
  const auto placement = htp::mem_placement(mem, t.local);
  if (!placement) return true;
  t.levels = placement->extents;
  t.strides = placement->strides;
  const size_t rank = t.levels.size();
  if (t.strides.size() != rank) return bad("has " + std::to_string(t.strides.size()) + " strides for rank " + std::to_string(rank));
  // Object element k holds the local element whose strided offset is k.
  const auto offsets = htp::placement_offsets(*placement);
  if (!offsets)
    return bad("(strides " + list_text(t.strides) + (t.levels == t.local ? " of the local shape " : " over the iters' extents ") +
               list_text(t.levels) +
               ") is not a permutation of the local elements (holes or overlaps); an AIE object holds exactly them");
  std::vector<int64_t> order(offsets->size());
  bool identity = true;
  for (size_t e = 0; e < offsets->size(); ++e) {
    order[static_cast<size_t>((*offsets)[e])] = static_cast<int64_t>(e);
    identity = identity && (*offsets)[e] == static_cast<int64_t>(e);
  }
  if (identity) t.strides.clear();
  else t.order = std::move(order);
  return true;
}

/// Whether the core's objects of `t` need the adapter: a memory layout, or two objects (InOut).
bool adapted(const TensorParam &t) { return !t.strides.empty() || t.rp.dir == "inout"; }

/// The external kernel `<name>` the core calls when some parameter is adapted: the emitted body becomes
/// `<name>_body` and works on one row-major tile per parameter. A strided object is gathered into a
/// row-major local before the body (In, InOut) and scattered back after it (Out, InOut); an InOut
/// parameter is two objects — the one read (`p_X_in`) and the one written (`p_X`) — and the body
/// reads and writes the written one after it was filled from the read one.
std::string kernel_adapter(const std::string &name, const std::vector<TensorParam> &tensors) {
  std::vector<std::string> params, call, wrap, notes;
  std::ostringstream before, after;
  for (const TensorParam &t : tensors) {
    const std::string ct = c_type(t.rp.dtype), p = "p_" + t.rp.name, n = std::to_string(product(t.local));
    const bool reads = t.rp.dir != "out", writes = t.rp.dir != "in", inout = reads && writes;
    const std::string src = inout ? p + "_in" : p;
    if (inout) params.push_back(ct + " *" + src);
    params.push_back(ct + " *" + p);
    if (t.strides.empty()) {
      if (inout) before << "  for (int64_t e = 0; e < " << n << "; ++e) " << p << "[e] = " << src << "[e];\n";
      call.push_back(p);
      continue;
    }
    notes.push_back("'" + t.rp.name + "' (strides " + list_text(t.strides) + ")");
    const std::string m = "m_" + t.rp.name;
    call.push_back(m);
    before << "  " << ct << " " << m << "[" << n << "];\n  static const int64_t d_" << t.rp.name << "[] = {";
    for (size_t k = 0; k < t.levels.size(); ++k) before << (k ? ", " : "") << t.levels[k];
    before << "}, s_" << t.rp.name << "[] = {";
    for (size_t k = 0; k < t.strides.size(); ++k) before << (k ? ", " : "") << t.strides[k];
    before << "};\n";
    const std::string off = "htp_mem_offset(e, d_" + t.rp.name + ", s_" + t.rp.name + ", " + std::to_string(t.levels.size()) + ")";
    if (reads) before << "  for (int64_t e = 0; e < " << n << "; ++e) " << m << "[e] = " << src << "[" << off << "];\n";
    if (writes) after << "  for (int64_t e = 0; e < " << n << "; ++e) " << p << "[" << off << "] = " << m << "[e];\n";
  }
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string type = params[i].substr(0, params[i].find(' '));
    wrap.push_back("static_cast<" + type + " *>(args[" + std::to_string(i) + "])");
  }
  auto join = [](const std::vector<std::string> &v) {
    std::string out;
    for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + v[i];
    return out;
  };
  std::ostringstream o;
  o << "\n// The external kernel the core calls (backend-aie plan_kernel.cpp): the body above works on one\n"
    << "// row-major tile per parameter; InOut parameters come as the object read (_in) and the one written.\n";
  if (!notes.empty())
    o << "// The objects of " << join(notes) << " hold the local part in the memory layout of the `mem`\n"
      << "// facet (the DMAs put it there).\n"
      << "static inline int64_t htp_mem_offset(int64_t e, const int64_t *shape, const int64_t *strides, int rank) {\n"
      << "  int64_t off = 0;\n"
      << "  for (int k = rank - 1; k >= 0; --k) { off += (e % shape[k]) * strides[k]; e /= shape[k]; }\n"
      << "  return off;\n}\n";
  o << "\nextern \"C\" void " << name << "(" << join(params) << ") {\n" << before.str() << "  " << name << "_body("
    << join(call) << ");\n" << after.str() << "}\n\n"
    << "#ifdef HTP_AIE_SIM\nextern \"C\" void htp_aie_call_" << name << "(void **args) {\n  " << name << "(" << join(wrap)
    << ");\n}\n#endif\n";
  return o.str();
}

/// The view of a core at mesh coordinate m; nullopt (with a problem) for layouts AIE does not lower.
std::optional<View> core_view(const TensorParam &p, const std::vector<int64_t> &m, const Json &span,
                              std::vector<Problem> &problems) {
  View v{std::vector<int64_t>(p.rp.shape.size(), 0), p.local};
  if (!p.layout) return v;
  if (!p.layout->offset.empty()) {
    problems.push_back({"aie.layout", "layout of '" + p.rp.name + "' places it at a mesh offset; AIE mapping needs layouts over the whole mesh", span});
    return std::nullopt;
  }
  std::vector<int64_t> block(p.rp.shape.size(), 0);
  for (const htp::LayoutIter &it : p.layout->shard) {
    const int64_t dim = it.dim.value_or(-1);
    auto axis = mesh_axis(it.axis);
    if (dim < 0 || dim >= static_cast<int64_t>(block.size()) || !axis || *axis >= m.size() || it.stride != 1) {
      Json text;
      htp::to_json(text, it);
      problems.push_back({"aie.layout", "layout of '" + p.rp.name + "' has a shard iter " + text.dump() +
                                            " that AIE mapping cannot lower (block shards over mesh axes only)", span});
      return std::nullopt;
    }
    block[static_cast<size_t>(dim)] = block[static_cast<size_t>(dim)] * it.extent + m[*axis];
  }
  for (size_t d = 0; d < block.size(); ++d) v.offset[d] = block[d] * p.local[d];
  return v;
}

}  // namespace

std::optional<EntryPlan> plan_kernel_entry(const htp::TileKernel &kernel, const htp::LayoutSignatures &layouts,
                                           const DeviceProfile &device, std::vector<Problem> &problems) {
  const std::string &name = kernel.name;
  const Json span = span_json(kernel.span);
  std::vector<int64_t> mesh = kernel.mapping.value_or(std::vector<int64_t>{1});
  const int64_t ncores = checked_product(mesh).value_or(INT64_MAX);
  if (ncores > device.compute_tiles() || ncores < 1) {
    problems.push_back({"aie.grid-too-large", "kernel '" + name + "' has mapping " + Json(mesh).dump() + " = " +
                                                  (ncores == INT64_MAX ? std::string("more than 2**63") : std::to_string(ncores)) +
                                                  " cores, but device " + device.describe() +
                                                  " has " + std::to_string(device.compute_tiles()), span});
    return std::nullopt;
  }
  const htp::LayoutFunction *sig = layouts.function(name);
  EntryPlan plan{name, "kernel", span};
  const std::string sym = kernel_symbol(name);
  KernelPlan kp;
  kp.function = sym;
  kp.constants = constexpr_env(kernel);
  std::vector<TensorParam> tensors;
  bool ok = true;
  for (const htp::TileParam &p : kernel.params) {
    const std::string &pname = p.name;
    if (p.type.is_constexpr()) continue;
    if (p.type.is_scalar()) {  // a one-element object every core acquires; the body reads *p_<name>
      RuntimeParam rp{pname, scalar_shape(p.type.dtype), p.type.dtype, "in", true};
      plan.params.push_back(rp);
      kp.params.push_back({"p_" + pname, KernelArg{true, rp.shape, rp.dtype}});
      kp.scalars[pname] = "(*p_" + pname + ")";
      tensors.push_back(TensorParam{rp, rp.shape, std::nullopt, {}, {}});
      continue;
    }
    auto rp = runtime_param(p);
    if (!rp) {
      problems.push_back({"aie.param", "parameter '" + pname + "' of kernel '" + name + "' has no static tensor type", span});
      ok = false;
      continue;
    }
    const htp::Layout *layout = sig ? sig->param(pname) : nullptr;
    TensorParam t{*rp, p.body_shape(), layout ? std::optional<htp::Layout>(*layout) : std::nullopt, {}, {}};
    if (t.layout && t.layout->local_shape) t.local = *t.layout->local_shape;
    if (t.rp.dir == "out" && !stores_whole(kernel, pname, t.local)) {
      rp->dir = t.rp.dir = "inout";
      rp->entry_out = t.rp.entry_out = true;  // (an output the caller omits is allocated)
    }
    if (!check_stream_size("the block of '" + pname + "' each core of kernel '" + name + "' holds", t.local, rp->dtype, 1,
                           device, span, problems) ||
        !read_mem_facet(t, name, span, problems)) {
      ok = false;
      continue;
    }
    plan.params.push_back(*rp);
    kp.params.push_back({"p_" + pname, KernelArg{true, t.local, rp->dtype}});
    tensors.push_back(std::move(t));
  }
  if (!ok) return std::nullopt;
  kp.access = [&](const htp::TileOp &op, int) -> std::optional<TensorAccess> {
    const std::string t = (op.is("load") ? op.src : op.dst).value_or("");
    for (const auto &tp : tensors)
      if (tp.rp.name == t) return object_access(kernel, op, "p_" + t, tp.local, tp.rp.dir);
    return std::nullopt;
  };
  kp.body = kernel.body;
  const bool adapter = std::any_of(tensors.begin(), tensors.end(), adapted);
  if (adapter) kp.function = sym + "_body";
  std::string error;
  auto emitted = emit_kernel(kernel, kp, &error);
  if (!emitted) {
    problems.push_back({"aie.kernel", "kernel '" + name + "': " + error, span});
    return std::nullopt;
  }
  int64_t locals = emitted->locals_bytes;
  for (const auto &t : tensors)
    if (!t.strides.empty()) locals += product(t.local) * dtype_bytes(t.rp.dtype);  // the adapter's copies
  KernelFunc kf{sym, "kernels/" + sym + ".cc", sym + ".o", {}, locals, emitted->work};
  for (const auto &t : tensors) {
    if (t.rp.dir == "inout") kf.args.push_back(KernelArg{true, t.local, t.rp.dtype});  // the object read
    kf.args.push_back(KernelArg{true, t.local, t.rp.dtype});
  }
  plan.kernels.push_back(kf);
  plan.sources[sym] = emitted->source + (adapter ? kernel_adapter(sym, tensors) : "");
  for (int64_t l = 0; l < ncores; ++l) {
    auto m = mesh_coord(l, mesh);
    std::string label;
    for (auto x : m) label += (label.empty() ? "" : ", ") + std::to_string(x);
    CorePlan core{name + "[" + label + "]", sym, 1, {}, span};
    for (const auto &t : tensors) {
      auto v = core_view(t, m, span, problems);
      if (!v) return std::nullopt;
      const std::string text = t.layout ? t.layout->text : "";
      for (bool in : {true, false}) {  // InOut: the object read, then the one written
        if (t.rp.dir == (in ? "out" : "in")) continue;
        core.ports.push_back({PortPlan::Kind::Stream, plan.streams.size()});
        plan.streams.push_back({t.rp.name, in, {*v}, span, t.order, text});
      }
    }
    plan.cores.push_back(std::move(core));
  }
  return plan;
}

}  // namespace htp::aie
