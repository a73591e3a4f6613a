// tile.lower: the register IR of every kernel and of every function marked `tile.lower`, as the module
// attribute tile.kernels (htp.tile.kernels.v1, docs/ir-contracts.md §4). The checker that typed the bodies
// builds the IR in the same walk; tile.typecheck ran before, so this pass reports nothing new.
#include "kernel_checker.hpp"
#include "passes.hpp"

namespace tile {

void lower(htp::PassContext &ctx) {
  ojson kernels = ojson::array();
  for (const auto &f : tile_functions(ctx.module().root())) {
    CheckResult r = check_tile_function(ctx, f, CheckOptions{.warnings = false, .record_types = false});
    kernels.push_back(std::move(r.kernel));
  }
  ojson doc;
  doc["schema"] = "htp.tile.kernels.v1";
  doc["kernels"] = std::move(kernels);
  ctx.module().set_attr("tile.kernels", doc.dump());
}

} // namespace tile
