// The tile scanner: Uses.Dialect(name=tile) per kernel and Uses.Intrinsic(set=tile,op=X) per intrinsic call.
//
// Kernels are scanned completely. Functions of other dialects (workloads, processes) may call tile
// intrinsics too: there a call counts when it is spelled `tile.X(...)` or `X(...)` with X an imported
// intrinsic name not rebound in the function (the builtins abs / max / min excepted, which stay Python's);
// such a function also raises Uses.Dialect(name=tile), at its first intrinsic call, so that the tile passes
// are selected to type and lower it once its dialect marks it `tile.lower`.
#include "passes.hpp"

#include "functions.hpp"

namespace tile {

namespace {

htp::NodeRef kernel_anchor(htp::NodeRef fn) {
  // The decorator is what makes a function a kernel: obligations point at it.
  return fn.size("decorator_list") ? fn.item("decorator_list", 0) : fn;
}

/// Records the intrinsic calls of `fn`; returns the first one (empty when none).
htp::NodeRef scan_calls(htp::PassContext &ctx, htp::NodeRef fn, bool tile_prefix_only) {
  auto bound = bound_names(fn);
  htp::NodeRef first;
  for (auto stmt : fn.items("body"))
    stmt.walk([&](htp::NodeRef n) {
      auto op = intrinsic_callee(n, bound, tile_prefix_only);
      if (!op) return;
      ctx.add_obligation("Uses.Intrinsic(set=tile,op=" + *op + ")", n);
      if (!first) first = n;
    });
  return first;
}

} // namespace

void scan(htp::PassContext &ctx) {
  for (auto stmt : ctx.module().root().items("body")) {
    if (!stmt.is("FunctionDef")) continue;
    bool kernel = is_tile_kernel(stmt);
    if (kernel) ctx.add_obligation("Uses.Dialect(name=tile)", kernel_anchor(stmt));
    htp::NodeRef first = scan_calls(ctx, stmt, !kernel);
    if (!kernel && first) ctx.add_obligation("Uses.Dialect(name=tile)", first);
  }
}

} // namespace tile
