// tile.typecheck: checks every function with a tile body and records tile.signature on it and tile.type on
// its typed expressions (docs/ir-contracts.md §1, §3).
#include "kernel_checker.hpp"
#include "passes.hpp"

namespace tile {

void typecheck(htp::PassContext &ctx) {
  for (const auto &f : tile_functions(ctx.module().root())) {
    CheckResult r = check_tile_function(ctx, f, CheckOptions{.warnings = true, .record_types = true});
    if (!r.ok) continue; // the pass fails; attributes would describe an ill-typed body
    f.fn.set_attr("tile.signature", r.signature.dump(), ctx.diag());
    for (const auto &[node, type] : r.types)
      node.set_attr("tile.type", type.dump(), ctx.diag());
  }
}

} // namespace tile
