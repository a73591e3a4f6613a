// The typing rules of layouts: elementwise join, the matmul contraction rule, reductions that leave
// pending collective effects, the collectives that discharge them, relayout, and the store rule.
// Every rule is a pure function of canonical layouts; the passes only walk the program and apply them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "axe_layout.hpp"

namespace htp::axe {

/// How an operation treats pending reductions (see the table in docs/dialects/layout-axe.md).
enum class EffectClass {
  Linear,    ///< add, sub, neg, cast, copy, muls, divs: partial sums stay partial sums
  Scale,     ///< mul, div, matmul: one operand may be a partial sum, scaled by a non-partial one
  Nonlinear, ///< exp, max, adds, ...: no operand may be partial
};

/// The effect class of a tile intrinsic or Python operator name ("add", "exp", "matmul", ...).
EffectClass effect_class(std::string_view op);

/// Elementwise join of two operands of `op`: R ⊔ R = R, S(i) ⊔ S(i) = S(i), R ⊔ S(i) = S(i) when the R side
/// is replicated over axis i, anything else is an error asking for relayout (code layout.join).
Result<AxeLayout> join(const AxeLayout &a, const AxeLayout &b, std::string_view op, const Mesh &mesh);
/// A one-operand op (unary intrinsic or scalar form): the layout is kept, pending effects per `op`'s class.
Result<AxeLayout> unary(const AxeLayout &x, std::string_view op, const Mesh &mesh);
/// matmul(a, b): the contraction dims (a's dim 1, b's dim 0) must have the same layout (code
/// layout.contraction); a contraction sharded on an axis leaves a pending sum over it.
Result<AxeLayout> contract(const AxeLayout &a, const AxeLayout &b, const Mesh &mesh);
/// A reduction (`op` sum/max/min) over dim `dim`: the dim becomes size 1 and replicated; each shard iter
/// it had becomes a pending `op` over that axis. `source` names the intrinsic for messages.
Result<AxeLayout> reduce(const AxeLayout &x, int dim, std::string_view op, std::string_view source,
                         const Mesh &mesh);
/// allreduce over `axis` (every pending axis when nullopt) with reduction `op`: discharges the pending
/// effects, after which the value is replicated over those axes (code layout.collective when none).
Result<AxeLayout> allreduce(const AxeLayout &x, const std::optional<std::string> &axis, std::string_view op,
                            const Mesh &mesh);
/// allgather along dim `dim`: a sharded dim becomes replicated.
Result<AxeLayout> allgather(const AxeLayout &x, int dim, const Mesh &mesh);
/// reduce_scatter: discharges the pending sum over `axis` (the only one when nullopt) and shards dim `dim`
/// on that axis.
Result<AxeLayout> reduce_scatter(const AxeLayout &x, int dim, const std::optional<std::string> &axis,
                                 std::string_view op, const Mesh &mesh);
/// relayout(x, to=...): any distribution to any other; the value must owe nothing.
Result<AxeLayout> relayout(const AxeLayout &x, const AxeLayout &to, const Mesh &mesh);
/// A value leaving the kernel (stored or returned) must owe no reduction (code layout.undischarged).
std::optional<LayoutError> check_discharged(const AxeLayout &value, std::string_view where, const Mesh &mesh);
/// Storing `value` into a tensor of layout `dst`: each core must hold the part of dst it writes, i.e.
/// value ⊔ dst = dst (code layout.store).
std::optional<LayoutError> check_store(const AxeLayout &value, const AxeLayout &dst,
                                       std::string_view dst_name, const Mesh &mesh);

/// A mesh axis name for a collective's `axis=` argument: 1 -> "mesh.y", "mesh.y" -> "mesh.y".
std::optional<std::string> mesh_axis_argument(const std::string &spelled, const Mesh &mesh);

} // namespace htp::axe
