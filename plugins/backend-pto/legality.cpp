#include "legality.hpp"

#include <algorithm>

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
    const json value = o.ir.value.value_or(json());
    if (c->kind == OpKind::Full && !(value.is_number() && value.get<double>() == 0.0)) {
      bool acc = false;
      for_each_op(k.body, [&](const Op &m) { acc = acc || (m.op == "matmul" && m.dst == o.dst); });
      if (acc)
        out.push_back({"pto.contract",
                       "pto.full: accumulator '" + o.dst + "' can only be reset to 0 (the cube unit has no fill)", o.span});
    }
  });
}

bool allows(const std::vector<std::string_view> &spaces, const std::string &space) {
  return std::find(spaces.begin(), spaces.end(), space) != spaces.end();
}

/// Every tile operand and result of every statement lives in a space its contract allows.
void check_spaces(const Kernel &k, const KernelPlan &plan, std::vector<Problem> &out) {
  for_each_op(k.body, [&](const Op &o) {
    const IntrinsicContract *c = find_intrinsic(o.op);
    if (!c) return;
    const MemorySpaces m = memory_spaces(*c);
    auto check = [&](const std::string &reg, const std::vector<std::string_view> &spaces, const char *role) {
      if (!plan.by_register.count(reg)) return;  // a tensor parameter (GM) or a scalar
      const std::string &space = plan.buffer(reg).space;
      if (!allows(spaces, space)) {
        std::string hint;  // an accumulator started from memory: the cube's L0C is filled by matmuls only
        if (c->kind == OpKind::Load && space == "L0C")
          hint = "; a matmul accumulator cannot be loaded on a2a3: start it with full((R, C), 0.0) and add the "
                 "loaded tile to the result (store(c, add(load(c), matmul(a, b))))";
        out.push_back({"pto.memory-space",
                       "pto." + o.op + ": " + role + " '" + reg + "' is planned in " + space +
                           " but the contract places it in " + memory_spaces_text(m) + hint,
                       o.span.line ? o.span : k.span});
      }
    };
    if (c->kind != OpKind::Store) check(o.dst, m.out, "result");
    for (size_t i = 0; i < o.args.size(); ++i)  // matmul's third operand is its accumulator (the result)
      check(o.args[i], c->kind == OpKind::Matmul && i == 2 ? m.out : m.in, "operand");
    if (c->kind == OpKind::Store) check(o.stored(), m.in, "stored value");
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
    check_spaces(k, plan, out);
    for (std::string &m : check_memory(k, plan, hw)) out.push_back({"pto.memory", std::move(m), k.span});
  } catch (const IrError &e) {
    out.push_back({e.code(), e.what(), e.span().line ? e.span() : k.span});
  }
  return out;
}

}  // namespace ptobe
