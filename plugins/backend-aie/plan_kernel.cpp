// Front-end for kernels with a grid: `@kernel(mapping=[P0, P1])` places one core per mesh coordinate;
// each tensor parameter's layout (layout.signatures) gives the view every core works on.
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
  Json layout;  // null: replicated
};

/// The view of a core at mesh coordinate m; nullopt (with a problem) for layouts AIE does not lower.
std::optional<View> core_view(const TensorParam &p, const std::vector<int64_t> &m, const Json &span,
                              std::vector<Problem> &problems) {
  View v{std::vector<int64_t>(p.rp.shape.size(), 0), p.local};
  if (!p.layout.is_object()) return v;
  if (!p.layout.value("offset", Json::object()).empty()) {
    problems.push_back({"aie.layout", "layout of '" + p.rp.name + "' places it at a mesh offset; AIE mapping needs layouts over the whole mesh", span});
    return std::nullopt;
  }
  std::vector<int64_t> block(p.rp.shape.size(), 0);
  for (const auto &it : p.layout.value("shard", Json::array())) {
    const int dim = it.value("dim", -1);
    auto axis = mesh_axis(it.value("axis", ""));
    if (dim < 0 || dim >= static_cast<int>(block.size()) || !axis || *axis >= m.size() || it.value("stride", 1) != 1) {
      problems.push_back({"aie.layout", "layout of '" + p.rp.name + "' has a shard iter " + it.dump() +
                                            " that AIE mapping cannot lower (block shards over mesh axes only)", span});
      return std::nullopt;
    }
    block[dim] = block[dim] * it.value("extent", int64_t{1}) + m[*axis];
  }
  for (size_t d = 0; d < block.size(); ++d) v.offset[d] = block[d] * p.local[d];
  return v;
}

}  // namespace

std::optional<EntryPlan> plan_kernel_entry(const Json &kernel, const Json &layouts, const DeviceProfile &device,
                                           std::vector<Problem> &problems) {
  const std::string name = kernel.value("name", "");
  const Json span = kernel.value("span", Json());
  std::vector<int64_t> mesh = kernel.value("mapping", Json()).is_array()
                                  ? kernel["mapping"].get<std::vector<int64_t>>() : std::vector<int64_t>{1};
  const int64_t ncores = product(mesh);
  if (ncores > device.compute_tiles() || ncores < 1) {
    problems.push_back({"aie.grid-too-large", "kernel '" + name + "' has mapping " + Json(mesh).dump() + " = " +
                                                  std::to_string(ncores) + " cores, but device " + device.describe() +
                                                  " has " + std::to_string(device.compute_tiles()), span});
    return std::nullopt;
  }
  const Json sig = layouts.is_object() ? layouts.value("functions", Json::object()).value(name, Json::object())
                                       : Json::object();
  EntryPlan plan{name, "kernel", span};
  KernelPlan kp;
  kp.function = name;
  kp.constants = constexpr_env(kernel);
  std::vector<TensorParam> tensors;
  bool ok = true;
  for (const auto &p : kernel.value("params", Json::array())) {
    const std::string kind = p.value("type", Json::object()).value("kind", "");
    const std::string pname = p.value("name", "");
    if (kind == "constexpr") continue;
    if (kind == "scalar") {
      problems.push_back({"aie.runtime-scalar", "scalar parameter '" + pname + "' of kernel '" + name +
                                                    "' is a runtime value; AIE entry kernels take tensors (make it Constexpr)", span});
      ok = false;
      continue;
    }
    auto rp = runtime_param(p);
    if (!rp) {
      problems.push_back({"aie.param", "parameter '" + pname + "' of kernel '" + name + "' has no static tensor type", span});
      ok = false;
      continue;
    }
    if (rp->dir == "inout") {
      problems.push_back({"aie.inout", "InOut parameter '" + pname + "' of kernel '" + name +
                                           "': AIE object FIFOs move data one way; split it into In and Out", span});
      ok = false;
      continue;
    }
    TensorParam t{*rp, p.value("local_shape", rp->shape), sig.value("params", Json::object()).value(pname, Json())};
    if (t.layout.is_object() && t.layout.contains("local_shape")) t.local = t.layout["local_shape"].get<std::vector<int64_t>>();
    plan.params.push_back(*rp);
    kp.params.push_back({"p_" + pname, KernelArg{true, t.local, rp->dtype}});
    tensors.push_back(std::move(t));
  }
  if (!ok) return std::nullopt;
  kp.access = [&](const Json &op, int) -> std::optional<TensorAccess> {
    const std::string t = op.value("op", "") == "load" ? op.value("src", "") : op.value("dst", "");
    for (const auto &tp : tensors)
      if (tp.rp.name == t) return TensorAccess{"p_" + t, tp.local, true};
    return std::nullopt;
  };
  kp.body = kernel.value("body", Json::array());
  std::string error;
  auto emitted = emit_kernel(kernel, kp, &error);
  if (!emitted) {
    problems.push_back({"aie.kernel", "kernel '" + name + "': " + error, span});
    return std::nullopt;
  }
  KernelFunc kf{name, "kernels/" + name + ".cc", name + ".o", {}, emitted->locals_bytes};
  for (const auto &[n, a] : kp.params) kf.args.push_back(a);
  plan.kernels.push_back(kf);
  plan.sources[name] = emitted->source;
  for (int64_t l = 0; l < ncores; ++l) {
    auto m = mesh_coord(l, mesh);
    std::string label;
    for (auto x : m) label += (label.empty() ? "" : ", ") + std::to_string(x);
    CorePlan core{name + "[" + label + "]", name, 1, {}, span};
    for (const auto &t : tensors) {
      auto v = core_view(t, m, span, problems);
      if (!v) return std::nullopt;
      core.ports.push_back({PortPlan::Kind::Stream, plan.streams.size()});
      plan.streams.push_back({t.rp.name, t.rp.dir == "in", {*v}, span});
    }
    plan.cores.push_back(std::move(core));
  }
  return plan;
}

}  // namespace htp::aie
