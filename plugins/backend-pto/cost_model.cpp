#include "cost_model.hpp"

#include "intrinsics.hpp"

namespace ptobe {

namespace {

/// The statement in the SDK's form, nested statements included, under its normalised name.
htp::TileOp tile_op(const Op &o) {
  htp::TileOp t = o.ir;
  t.op = o.op;
  if (!o.dst.empty()) t.dst = o.dst;
  t.body.clear();
  t.then_body.clear();
  t.else_body.clear();
  for (const Op &c : o.body) t.body.push_back(tile_op(c));
  for (const Op &c : o.then_body) t.then_body.push_back(tile_op(c));
  for (const Op &c : o.else_body) t.else_body.push_back(tile_op(c));
  return t;
}

}  // namespace

htp::KernelWork kernel_work(const Kernel &k) {
  std::vector<htp::TileOp> body;
  for (const Op &o : k.body) body.push_back(tile_op(o));
  nlohmann::json constants = nlohmann::json::object();
  for (const Param &p : k.params)
    if (p.kind == "constexpr" && p.value.is_number_integer()) constants[p.name] = p.value;
  htp::KernelWork w = htp::count_kernel_work(
      body,
      [&](const std::string &name) -> std::optional<htp::TileShape> {
        const Local *l = k.local(name);
        if (!l || l->scalar) return std::nullopt;
        return htp::TileShape{l->rows(), l->cols(), l->dtype};
      },
      constants);
  const double runs = static_cast<double>(k.repeat);  // a tiled task runs the body `repeat` times
  for (double *v : {&w.matmul_flops, &w.vector_bytes, &w.transcendental_bytes, &w.bytes_loaded, &w.bytes_stored})
    *v *= runs;
  return w;
}

nlohmann::json kernel_costs_json(const BuiltPackage &p, const HardwareProfile &hw) {
  const htp::RooflineRates rates = hw.performance.rates();
  nlohmann::json kernels = nlohmann::json::object();
  for (const KernelUnit &u : p.kernels) {
    const htp::KernelWork w = kernel_work(u.kernel);
    nlohmann::json j = htp::estimate_work(w, rates).to_json();
    j["func_id"] = u.func_id;
    j["core_type"] = std::string(core_type_name(u.plan.core));
    j["work"] = w.to_json();
    kernels[u.kernel.name] = j;
  }
  return {{"schema", "htp.pto.kernel_costs.v1"},
          {"kind", "estimate"},
          {"profile", hw.name},
          {"cores", {{"AIC", hw.aic_cores}, {"AIV", hw.aiv_cores}}},
          {"performance", hw.performance.to_json()},
          {"kernels", kernels}};
}

}  // namespace ptobe
