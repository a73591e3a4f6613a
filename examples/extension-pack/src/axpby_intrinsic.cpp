// Intrinsic set `ext` with one intrinsic, `ext.axpby(a, b, alpha, beta)` = alpha * a + beta * b on tiles.
//
// Intrinsics are lowered per target by passes whose `applies_to` names the intrinsic and the backend:
//  * `ext.axpby-to-tile` (Backend.PTO): rewrites the call into portable tile intrinsics,
//    tile.add(tile.muls(a, alpha), tile.muls(b, beta)), which backend-pto emits as TMULS, TMULS, TADD;
//  * `ext.axpby-cpu-ref` (Backend.CpuRef): keeps the call as one fused foreign op `ext.axpby` (tile.foreign)
//    that the cpu-ref emitter writes as a single loop, when the result's tile type is known (recorded by
//    @elementwise lowering as `ext.tile_type`, or annotated: `t: Tile[16, 128, f32] = axpby(...)`);
//    anywhere else it falls back to the portable rewrite.
#include "ext_pack.hpp"

#include <algorithm>
#include <array>

namespace extpack {

namespace {

/// The four operands of an axpby call, positional or by keyword; reports and returns nothing when malformed.
std::optional<std::array<htp::NodeRef, 4>> axpby_operands(htp::NodeRef call, htp::PassContext &ctx) {
  static const std::array<const char *, 4> names = {"a", "b", "alpha", "beta"};
  std::array<htp::NodeRef, 4> ops{};
  auto args = call.items("args");
  for (size_t i = 0; i < args.size() && i < 4; ++i) ops[i] = args[i];
  for (auto k : call.items("keywords"))
    for (size_t i = 0; i < 4; ++i)
      if (k.text("arg").value_or("") == names[i]) ops[i] = k.child("value");
  bool complete = args.size() <= 4 && std::all_of(ops.begin(), ops.end(), [](htp::NodeRef n) { return bool(n); });
  if (!complete || args.size() + call.size("keywords") != 4) {
    ctx.error(call, "ext.axpby-args", "ext.axpby takes exactly (a, b, alpha, beta): two tiles and two scalars");
    return std::nullopt;
  }
  return ops;
}

/// The axpby calls of the module, innermost first (so a rewrite never clones an unrewritten call twice).
std::vector<htp::NodeRef> axpby_calls(htp::PassContext &ctx) {
  std::vector<htp::NodeRef> calls;
  ctx.module().root().walk([&](htp::NodeRef n) {
    if (is_axpby_call(n)) calls.push_back(n);
  });
  std::reverse(calls.begin(), calls.end());
  return calls;
}

htp::NodeRef tile_call(const htp::ModuleRef &m, const HtpSpan &span, std::string_view op,
                       std::vector<htp::NodeRef> args) {
  htp::NodeRef base = m.create("Name", &span);
  m.set_text(base, "id", "tile");
  m.set_child(base, "ctx", m.create("Load"));
  htp::NodeRef func = m.create("Attribute", &span);
  m.set_child(func, "value", base);
  m.set_text(func, "attr", op);
  m.set_child(func, "ctx", m.create("Load"));
  htp::NodeRef call = m.create("Call", &span);
  m.set_child(call, "func", func);
  for (size_t i = 0; i < args.size(); ++i) m.insert(call, "args", i, args[i]);
  return call;
}

/// axpby(a, b, alpha, beta) -> tile.add(tile.muls(a, alpha), tile.muls(b, beta)), in place.
void rewrite_to_tile(htp::NodeRef call, const std::array<htp::NodeRef, 4> &ops, htp::PassContext &ctx) {
  htp::ModuleRef m = ctx.module();
  HtpSpan span = call.span();
  htp::NodeRef scaled_a = tile_call(m, span, "muls", {m.clone(ops[0]), m.clone(ops[2])});
  htp::NodeRef scaled_b = tile_call(m, span, "muls", {m.clone(ops[1]), m.clone(ops[3])});
  m.replace(call, tile_call(m, span, "add", {scaled_a, scaled_b}));
}

/// The tile type of `t: Tile[R, C, dtype] (@ layout) = <call>`, or null.
json annotated_tile_type(htp::NodeRef call) {
  htp::NodeRef stmt = call.parent();
  if (!stmt.is("AnnAssign") || !(stmt.child("value") == call)) return nullptr;
  htp::NodeRef a = stmt.child("annotation");
  if (a.is("BinOp") && a.child("op").is("MatMult")) a = a.child("left");
  if (!a.is("Subscript") || a.child("value").dotted_name() != "Tile") return nullptr;
  auto elts = a.child("slice").items("elts");
  if (elts.size() != 3 || !elts[0].int_constant() || !elts[1].int_constant() || !elts[2].is("Name")) return nullptr;
  return json{{"kind", "tile"}, {"shape", {*elts[0].int_constant(), *elts[1].int_constant()}}, {"dtype", *elts[2].text("id")}};
}

}  // namespace

void lower_axpby_to_tile(htp::PassContext &ctx) {
  for (htp::NodeRef call : axpby_calls(ctx))
    if (auto ops = axpby_operands(call, ctx)) rewrite_to_tile(call, *ops, ctx);
}

void lower_axpby_cpu_ref(htp::PassContext &ctx) {
  for (htp::NodeRef call : axpby_calls(ctx)) {
    auto ops = axpby_operands(call, ctx);
    if (!ops) continue;
    json type = node_attr(call, "ext.tile_type");
    if (type.is_null()) type = annotated_tile_type(call);
    if (type.is_null() || call.size("keywords")) {
      rewrite_to_tile(call, *ops, ctx);
      continue;
    }
    // The tile dialect types the call from `type` and lowers it to {"op": "ext.axpby", "dst", "args"}.
    call.set_attr("tile.foreign", json{{"op", "ext.axpby"}, {"type", type}, {"attrs", json::object()}}.dump(),
                  ctx.diag());
  }
}

}  // namespace extpack
