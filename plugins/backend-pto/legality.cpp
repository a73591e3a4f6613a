#include "legality.hpp"

#include "intrinsics.hpp"
#include "memory_plan.hpp"

namespace ptobe {

namespace {

void check_statements(const Kernel &k, std::vector<Problem> &out) {
  for_each_op(k.body, [&](const Op &o) {
    if (o.op == "for" || o.op == "if" || o.op == "scalar") return;
    const IntrinsicContract *c = find_intrinsic(o.op);
    if (!c) {
      out.push_back({"pto.unsupported",
                     "'" + o.op + "' is not an operation backend-pto can lower (" + k.kind + " '" + k.name + "')", o.span});
      return;
    }
    if (auto e = check_contract(k, o, *c)) {
      out.push_back({"pto.contract", *e, o.span.line ? o.span : k.span});
      return;
    }
    const json &value = o.raw.contains("value") ? o.raw["value"] : json();
    if (c->kind == OpKind::Full && !(value.is_number() && value.get<double>() == 0.0)) {
      bool acc = false;
      for_each_op(k.body, [&](const Op &m) { acc = acc || (m.op == "matmul" && m.dst == o.dst); });
      if (acc)
        out.push_back({"pto.contract",
                       "pto.full: accumulator '" + o.dst + "' can only be reset to 0 (the cube unit has no fill)", o.span});
    }
  });
}

}  // namespace

std::vector<Problem> check_kernel(const Kernel &k, const HardwareProfile &hw) {
  std::vector<Problem> out;
  for (const Param &p : k.params)
    if (p.kind == "constexpr" && !(p.value.is_number() || p.value.is_boolean()))
      out.push_back({"pto.unsupported",
                     "constexpr parameter '" + p.name + "' of " + k.kind + " '" + k.name +
                         "' has no value to compile with; give it a default (" + p.name + ": Constexpr = ...)",
                     k.span});
  check_statements(k, out);
  if (!out.empty()) return out;
  try {
    KernelPlan plan = plan_memory(k, hw);
    for (std::string &m : check_memory(k, plan, hw)) out.push_back({"pto.memory", std::move(m), k.span});
  } catch (const IrError &e) {
    out.push_back({e.code(), e.what(), e.span().line ? e.span() : k.span});
  }
  return out;
}

}  // namespace ptobe
