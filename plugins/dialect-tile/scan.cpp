// The tile scanner: Uses.Dialect(name=tile) per kernel and Uses.Intrinsic(set=S,op=X) per intrinsic call,
// S = tile for the portable intrinsics and the vendor set for `pto.exp(...)`-style calls (docs/intrinsics.md).
//
// Kernels are scanned completely. Functions of other dialects (workloads, processes) may call tile
// intrinsics too: there a call counts when it is spelled `tile.X(...)` or `X(...)` with X an imported
// intrinsic name not rebound in the function (the builtins abs / max / min excepted, which stay Python's);
// such a function also raises Uses.Dialect(name=tile), at its first intrinsic call, so that the tile passes
// are selected to type and lower it once its dialect marks it `tile.lower`.
#include "passes.hpp"

#include "functions.hpp"

#include <algorithm>

namespace tile {

namespace {

htp::NodeRef kernel_anchor(htp::NodeRef fn) {
  // The decorator is what makes a function a kernel: obligations point at it.
  return fn.size("decorator_list") ? fn.item("decorator_list", 0) : fn;
}

/// Records the intrinsic calls of `fn`; returns the first one (empty when none). Annotations are types,
/// not calls: `t: Tile[...] @ Layout(...)` is left to the layout dialect.
htp::NodeRef scan_calls(htp::PassContext &ctx, htp::NodeRef fn, CallRules rules, const CapturedGlobals &globals) {
  auto bound = bound_names(fn);
  htp::NodeRef first;
  std::vector<htp::NodeRef> annotations;
  for (auto stmt : fn.items("body"))
    stmt.walk([&](htp::NodeRef n) {
      if (std::find(annotations.begin(), annotations.end(), n) != annotations.end()) return false;
      if (n.is("AnnAssign")) annotations.push_back(n.child("annotation"));
      auto call = intrinsic_call(n, bound, globals, rules);
      if (!call) return true;
      ctx.add_obligation("Uses.Intrinsic(set=" + call->set + ",op=" + call->op + ")", n);
      if (!first) first = n;
      return true;
    });
  return first;
}

} // namespace

void scan(htp::PassContext &ctx) {
  const CapturedGlobals globals = captured_globals(ctx.module());
  for (auto stmt : ctx.module().root().items("body")) {
    if (!stmt.is("FunctionDef")) continue;
    bool kernel = is_tile_kernel(stmt);
    if (kernel) ctx.add_obligation("Uses.Dialect(name=tile)", kernel_anchor(stmt));
    htp::NodeRef first =
        scan_calls(ctx, stmt, kernel ? CallRules::kernel() : CallRules::other_dialect(), globals);
    if (!kernel && first) ctx.add_obligation("Uses.Dialect(name=tile)", first);
  }
}

} // namespace tile
