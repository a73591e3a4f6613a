#include "layout_rules.hpp"

#include <algorithm>
#include <set>

namespace htp::axe {

namespace {

/// Mesh axes first in mesh order, then other axes by name: the canonical order of replica iters.
void sort_replica(std::vector<AxeIter> &replica, const Mesh &mesh) {
  auto key = [&](const AxeIter &it) {
    auto i = mesh.index_of(it.axis);
    return std::make_pair(i ? *i : mesh.rank(), it.axis);
  };
  std::stable_sort(replica.begin(), replica.end(),
                   [&](const AxeIter &a, const AxeIter &b) { return key(a) < key(b); });
}

void sort_shard(std::vector<AxeIter> &shard) {
  std::stable_sort(shard.begin(), shard.end(),
                   [](const AxeIter &a, const AxeIter &b) { return a.dim < b.dim; });
}

void sort_pending(std::vector<PendingEffect> &p) {
  std::stable_sort(p.begin(), p.end(), [](const PendingEffect &a, const PendingEffect &b) {
    return std::tie(a.iter.axis, a.op) < std::tie(b.iter.axis, b.op);
  });
  p.erase(std::unique(p.begin(), p.end()), p.end());
}

bool shards_axis(const AxeLayout &l, std::string_view axis) {
  return std::any_of(l.shard.begin(), l.shard.end(), [&](const AxeIter &s) { return s.axis == axis; });
}

/// "S(1)" / "R" / the iters of one dim, for messages.
std::string dim_text(const AxeLayout &l, int d, const Mesh &mesh) {
  auto iters = l.dim_iters(d);
  if (iters.empty()) return "R";
  if (iters.size() == 1 && iters[0].stride == 1)
    if (auto i = mesh.index_of(iters[0].axis); i && mesh.extents()[*i] == iters[0].extent)
      return "S(" + std::to_string(*i) + ")";
  std::string s;
  for (const auto &it : iters)
    s += (s.empty() ? "" : "·") + std::to_string(it.extent) + "@" + it.axis;
  return s;
}

std::string owes_text(const std::vector<PendingEffect> &pending) {
  std::string s;
  for (size_t i = 0; i < pending.size(); ++i) {
    const auto &p = pending[i];
    s += (i ? (i + 1 == pending.size() ? " and " : ", ") : "") + std::string("a ") + p.op + " over " +
         p.iter.axis;
    if (!p.source.empty()) s += " (from " + p.source + ")";
  }
  return s;
}

/// The result of a computation: no facets, no source text (it is a new value).
AxeLayout computed(const AxeLayout &base) {
  AxeLayout r = base;
  r.text.clear();
  r.source_kind = "axe";
  r.mem = MemFacet{};
  r.hw = HwFacet{};
  r.zero = false;
  return r;
}

/// The tile shape of `to` given the operand's: scaled by the change of the local shape (a gather
/// makes each core's part larger, a scatter smaller).
void rescale_tile(const AxeLayout &from, AxeLayout &to) {
  auto lf = local_shape(from), lt = local_shape(to);
  if (from.tile.size() != static_cast<size_t>(to.rank) || !lf || !lt) {
    to.tile.clear();
    return;
  }
  to.tile = from.tile;
  for (size_t d = 0; d < to.tile.size(); ++d)
    to.tile[d] = to.tile[d] * (*lt)[d] / (*lf)[d];
}

Result<std::vector<PendingEffect>> combine_pending(const AxeLayout &a, const AxeLayout &b,
                                                   std::string_view op) {
  switch (effect_class(op)) {
  case EffectClass::Linear:
    if (a.pending == b.pending || b.zero) return a.pending;
    if (a.zero) return b.pending;
    return fail("layout.effect",
                std::string(op) + " combines a value that owes " +
                    (a.pending.empty() ? "nothing" : owes_text(a.pending)) + " with one that owes " +
                    (b.pending.empty() ? "nothing" : owes_text(b.pending)) +
                    "; every core would apply it to its partial result: discharge with allreduce first");
  case EffectClass::Scale:
    if (!a.pending.empty() && !b.pending.empty())
      return fail("layout.effect", std::string(op) + " of two partial values (" + owes_text(a.pending) +
                                       "; " + owes_text(b.pending) +
                                       ") is not the partial of the product: "
                                       "discharge one with allreduce first");
    for (const auto *side : {&a, &b})
      for (const auto &p : side->pending)
        if (p.op != "sum")
          return fail("layout.effect", std::string(op) + " cannot scale a value that owes " + owes_text({p}) +
                                           ": discharge it with allreduce first");
    return a.pending.empty() ? b.pending : a.pending;
  case EffectClass::Nonlinear:
    for (const auto *side : {&a, &b})
      if (!side->pending.empty())
        return fail("layout.effect", std::string(op) + " needs complete values, but an operand owes " +
                                         owes_text(side->pending) + ": discharge it with allreduce first");
    return std::vector<PendingEffect>{};
  }
  return std::vector<PendingEffect>{};
}

Result<bool> same_rank(const AxeLayout &a, const AxeLayout &b, std::string_view op) {
  if (a.rank == b.rank) return true;
  return fail("layout.rank", std::string(op) + " combines a rank-" + std::to_string(a.rank) + " and a rank-" +
                                 std::to_string(b.rank) + " value");
}

Result<bool> same_offset(const AxeLayout &a, const AxeLayout &b, std::string_view op) {
  if (a.offset == b.offset) return true;
  return fail("layout.join",
              std::string(op) + " combines values placed at different mesh offsets; relayout one");
}

} // namespace

EffectClass effect_class(std::string_view op) {
  static const std::set<std::string, std::less<>> kLinear = {
      "add",           "sub",           "neg", "cast", "copy", "muls",   "divs",  "rowexpand",
      "rowexpand_add", "rowexpand_sub", "Add", "Sub",  "USub", "rowsum", "colsum"};
  static const std::set<std::string, std::less<>> kScale = {
      "mul", "div", "matmul", "rowexpand_mul", "rowexpand_div", "Mult", "Div", "MatMult"};
  if (kLinear.count(op)) return EffectClass::Linear;
  if (kScale.count(op)) return EffectClass::Scale;
  return EffectClass::Nonlinear;
}

Result<AxeLayout> join(const AxeLayout &a, const AxeLayout &b, std::string_view op, const Mesh &mesh) {
  if (auto r = same_rank(a, b, op); !r) return r.error();
  if (auto r = same_offset(a, b, op); !r) return r.error();
  AxeLayout r = computed(a);
  r.shard.clear();
  auto covered = [](const AxeLayout &side, const std::vector<AxeIter> &iters) {
    return std::all_of(iters.begin(), iters.end(),
                       [&](const AxeIter &it) { return side.replicated_over(it.axis); });
  };
  for (int d = 0; d < a.rank; ++d) {
    auto ia = a.dim_iters(d), ib = b.dim_iters(d);
    const std::vector<AxeIter> *take = nullptr;
    if (ia == ib)
      take = &ia;
    else if (ia.empty() && covered(a, ib))
      take = &ib;
    else if (ib.empty() && covered(b, ia))
      take = &ia;
    if (!take) {
      std::string why = ia.empty() || ib.empty()
                            ? "the replicated side is not replicated over the other side's axis (it shards "
                              "another dim on it)"
                            : "a value can be sharded on one axis per dim";
      return fail("layout.join", "cannot join the operands of " + std::string(op) + " (" + describe(a, mesh) +
                                     " and " + describe(b, mesh) + "): dim " + std::to_string(d) + " is " +
                                     dim_text(a, d, mesh) + " on the left and " + dim_text(b, d, mesh) +
                                     " on the right, and " + why +
                                     "; insert an explicit relayout(x, to=...)");
    }
    r.shard.insert(r.shard.end(), take->begin(), take->end());
  }
  r.replica.clear();
  for (const auto &it : a.replica)
    if (b.replicated_over(it.axis) && !shards_axis(r, it.axis)) r.replica.push_back(it);
  auto pending = combine_pending(a, b, op);
  if (!pending) return pending.error();
  r.pending = *pending;
  sort_pending(r.pending);
  if (r.shape.empty()) r.shape = b.shape;
  if (r.dtype.empty()) r.dtype = b.dtype;
  if (r.tile.empty()) r.tile = b.tile;
  return r;
}

Result<AxeLayout> unary(const AxeLayout &x, std::string_view op, const Mesh &) {
  if (effect_class(op) == EffectClass::Nonlinear && !x.pending.empty())
    return fail("layout.effect", std::string(op) + " needs a complete value, but its operand owes " +
                                     owes_text(x.pending) + ": discharge it with allreduce first");
  return computed(x);
}

Result<AxeLayout> contract(const AxeLayout &a, const AxeLayout &b, const Mesh &mesh) {
  if (a.rank != 2 || b.rank != 2)
    return fail("layout.rank", "matmul needs two rank-2 operands, got rank " + std::to_string(a.rank) +
                                   " and " + std::to_string(b.rank));
  if (auto r = same_offset(a, b, "matmul"); !r) return r.error();
  auto ka = a.dim_iters(1), kb = b.dim_iters(0);
  for (auto &it : kb)
    it.dim = 1; // compare the iters, not the dims they sit on
  if (ka != kb)
    return fail("layout.contraction", "matmul contracts dim 1 of the left operand (" + dim_text(a, 1, mesh) +
                                          ") with dim 0 of the right operand (" + dim_text(b, 0, mesh) +
                                          "): the contraction dims must have the same layout; relayout one "
                                          "operand");
  auto rows = a.dim_iters(0), cols = b.dim_iters(1);
  for (const auto &[mine, other, side] :
       {std::tuple{&rows, &b, "rows of the left"}, {&cols, &a, "columns of the right"}})
    for (const auto &it : *mine)
      if (shards_axis(*other, it.axis))
        return fail("layout.contraction",
                    std::string("matmul: the ") + side + " operand are sharded on " + it.axis +
                        ", so the other operand must be replicated over it, but it is " +
                        describe(*other, mesh) + "; relayout one operand");
  auto pending = combine_pending(a, b, "matmul");
  if (!pending) return pending.error();
  AxeLayout r = computed(a);
  r.shard = rows;
  for (auto it : cols) {
    it.dim = 1;
    r.shard.push_back(it);
  }
  r.pending = *pending;
  for (auto it : ka) {
    it.dim = -1;
    r.pending.push_back({"sum", it, "matmul"});
  }
  sort_pending(r.pending);
  r.replica.clear();
  for (const auto &it : a.replica)
    if (b.replicated_over(it.axis) && !shards_axis(r, it.axis)) r.replica.push_back(it);
  r.shape = a.shape.size() == 2 && b.shape.size() == 2 ? std::vector<int64_t>{a.shape[0], b.shape[1]}
                                                       : std::vector<int64_t>{};
  r.tile = a.tile.size() == 2 && b.tile.size() == 2 ? std::vector<int64_t>{a.tile[0], b.tile[1]}
                                                    : std::vector<int64_t>{};
  r.dtype = a.dtype == "i8" ? "i32" : "f32";
  return r;
}

Result<AxeLayout> reduce(const AxeLayout &x, int dim, std::string_view op, std::string_view source,
                         const Mesh &) {
  if (dim < 0 || dim >= x.rank)
    return fail("layout.rank", std::string(source) + " reduces dim " + std::to_string(dim) + " of a rank-" +
                                   std::to_string(x.rank) + " value");
  for (const auto &p : x.pending)
    if (p.op != "sum" || op != "sum")
      return fail("layout.effect", std::string(source) + " needs a complete value, but its operand owes " +
                                       owes_text(x.pending) + ": discharge it with allreduce first");
  AxeLayout r = computed(x);
  r.shard.clear();
  for (const auto &it : x.shard) {
    if (it.dim != dim) {
      r.shard.push_back(it);
      continue;
    }
    AxeIter owed = it;
    owed.dim = -1;
    r.pending.push_back({std::string(op), owed, std::string(source)});
  }
  sort_pending(r.pending);
  if (static_cast<int>(r.shape.size()) == r.rank) r.shape[static_cast<size_t>(dim)] = 1;
  if (static_cast<int>(r.tile.size()) == r.rank) r.tile[static_cast<size_t>(dim)] = 1;
  return r;
}

Result<AxeLayout> allreduce(const AxeLayout &x, const std::optional<std::string> &axis, std::string_view op,
                            const Mesh &mesh) {
  AxeLayout r = computed(x);
  r.pending.clear();
  bool discharged = false;
  for (const auto &p : x.pending) {
    if (axis && p.iter.axis != *axis) {
      r.pending.push_back(p);
      continue;
    }
    if (p.op != op)
      return fail("layout.collective", "allreduce(op=\"" + std::string(op) + "\") over " + p.iter.axis +
                                           ", but the value owes a " + p.op + " there; pass op=\"" + p.op +
                                           "\"");
    r.replica.push_back(p.iter);
    discharged = true;
  }
  if (!discharged)
    return fail("layout.collective", "allreduce" + (axis ? " over " + *axis : std::string()) +
                                         " discharges nothing: the value (" + describe(x, mesh) + ") owes " +
                                         (x.pending.empty() ? "no reduction" : owes_text(x.pending)) +
                                         "; summing complete values would count them once per core");
  sort_replica(r.replica, mesh);
  return r;
}

Result<AxeLayout> allgather(const AxeLayout &x, int dim, const Mesh &mesh) {
  if (dim < 0 || dim >= x.rank)
    return fail("layout.rank", "allgather along dim " + std::to_string(dim) + " of a rank-" +
                                   std::to_string(x.rank) + " value");
  if (!x.pending.empty())
    return fail("layout.effect", "allgather of a value that owes " + owes_text(x.pending) +
                                     ": discharge it with allreduce first");
  auto iters = x.dim_iters(dim);
  if (iters.empty())
    return fail("layout.collective", "allgather along dim " + std::to_string(dim) +
                                         ", which is not sharded (" + describe(x, mesh) + ")");
  AxeLayout r = computed(x);
  r.shard.clear();
  for (const auto &it : x.shard) {
    if (it.dim != dim) {
      r.shard.push_back(it);
      continue;
    }
    AxeIter rep = it;
    rep.dim = -1;
    r.replica.push_back(rep);
  }
  sort_replica(r.replica, mesh);
  rescale_tile(x, r);
  return r;
}

Result<AxeLayout> reduce_scatter(const AxeLayout &x, int dim, const std::optional<std::string> &axis,
                                 std::string_view op, const Mesh &mesh) {
  if (dim < 0 || dim >= x.rank)
    return fail("layout.rank", "reduce_scatter along dim " + std::to_string(dim) + " of a rank-" +
                                   std::to_string(x.rank) + " value");
  std::optional<PendingEffect> target;
  for (const auto &p : x.pending)
    if (!axis || p.iter.axis == *axis) {
      if (target)
        return fail("layout.collective", "reduce_scatter: the value owes " + owes_text(x.pending) +
                                             "; name the axis to discharge with axis=...");
      target = p;
    }
  if (!target)
    return fail("layout.collective", "reduce_scatter" + (axis ? " over " + *axis : std::string()) +
                                         " discharges nothing: the value (" + describe(x, mesh) + ") owes " +
                                         (x.pending.empty() ? "no reduction" : owes_text(x.pending)));
  if (target->op != op)
    return fail("layout.collective", "reduce_scatter(op=\"" + std::string(op) + "\") over " +
                                         target->iter.axis + ", but the value owes a " + target->op);
  if (!x.dim_iters(dim).empty())
    return fail("layout.collective", "reduce_scatter along dim " + std::to_string(dim) +
                                         ", which is already " + dim_text(x, dim, mesh));
  AxeLayout r = computed(x);
  r.pending.erase(std::find(r.pending.begin(), r.pending.end(), *target));
  AxeIter it = target->iter;
  it.dim = dim;
  r.shard.push_back(it);
  sort_shard(r.shard);
  if (!r.shape.empty())
    if (auto ls = local_shape(r); !ls) return ls.error();
  rescale_tile(x, r);
  return r;
}

Result<AxeLayout> relayout(const AxeLayout &x, const AxeLayout &to, const Mesh &mesh) {
  if (!x.pending.empty())
    return fail("layout.effect", "relayout of a value that owes " + owes_text(x.pending) +
                                     ": discharge it with allreduce first");
  if (x.rank != to.rank)
    return fail("layout.rank", "relayout of a rank-" + std::to_string(x.rank) + " value to a rank-" +
                                   std::to_string(to.rank) + " layout (" + describe(to, mesh) + ")");
  AxeLayout r = to;
  if (r.shape.empty()) r.shape = x.shape;
  if (r.dtype.empty()) r.dtype = x.dtype;
  if (!r.shape.empty())
    if (auto ls = local_shape(r); !ls) return ls.error();
  rescale_tile(x, r);
  return r;
}

std::optional<LayoutError> check_discharged(const AxeLayout &value, std::string_view where, const Mesh &) {
  if (value.pending.empty()) return std::nullopt;
  const auto &p = value.pending.front();
  return fail("layout.undischarged",
              std::string(where) + " a value that still owes " + owes_text(value.pending) +
                  ": each core holds a partial result; discharge it with an explicit allreduce(x, axis=\"" +
                  p.iter.axis + "\", op=\"" + p.op + "\") or reduce_scatter first");
}

std::optional<LayoutError> check_store(const AxeLayout &value, const AxeLayout &dst,
                                       std::string_view dst_name, const Mesh &mesh) {
  if (auto e = check_discharged(value, "storing into '" + std::string(dst_name) + "'", mesh)) return e;
  auto joined = join(value, dst, "store", mesh);
  if (joined && joined->same_distribution(dst)) return std::nullopt;
  return fail("layout.store", "storing a " + describe(value, mesh) + " value into '" + std::string(dst_name) +
                                  "' (" + describe(dst, mesh) + "): each core must hold the part of '" +
                                  std::string(dst_name) +
                                  "' it writes; use allgather or relayout(x, to=...) first");
}

std::optional<std::string> mesh_axis_argument(const std::string &spelled, const Mesh &mesh) {
  if (!spelled.empty() && std::all_of(spelled.begin(), spelled.end(), ::isdigit)) {
    size_t i = std::stoul(spelled);
    return i < mesh.rank() ? std::optional<std::string>(Mesh::axis_name(i)) : std::nullopt;
  }
  if (mesh.index_of(spelled)) return spelled;
  if (mesh.index_of("mesh." + spelled)) return "mesh." + spelled;
  return std::nullopt;
}

} // namespace htp::axe
