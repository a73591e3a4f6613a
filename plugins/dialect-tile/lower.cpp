// tile.lower: the register IR of every kernel and of every function marked `tile.lower`, as the module
// attribute tile.kernels (htp.tile.kernels.v1, docs/ir-contracts.md §4). The checker that typed the bodies
// builds the IR in the same walk; tile.typecheck ran before, so this pass reports nothing new. What it
// writes is checked with the SDK's reader (htp/tile_kernels.hpp), the one every backend reads it with.
#include <htp/tile_kernels.hpp>

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
  doc["schema"] = htp::kTileKernelsSchema;
  doc["kernels"] = std::move(kernels);
  try {
    (void)htp::read_tile_kernels(doc);
  } catch (const htp::IrDocumentError &e) {
    htp::SourceSpan at = e.span() ? e.span()->source_span(ctx.module().file()) : htp::SourceSpan{ctx.module().file()};
    htp::Host(ctx.api()).error(ctx.diag(), "tile.internal",
                               std::string("tile.lower built an invalid tile.kernels (a dialect-tile bug): ") + e.what(),
                               at);
    return;
  }
  ctx.module().set_attr(htp::kTileKernelsAttribute, doc.dump());
}

} // namespace tile
