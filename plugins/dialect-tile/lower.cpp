// tile.lower: the register IR of every kernel and of every function marked `tile.lower`, as the module
// attribute tile.kernels (htp.tile.kernels.v1, docs/ir-contracts.md §4). The pattern tile.lower-function
// lowers one function at a time through the host's rewrite driver and records its IR on the function as the
// node attribute tile.kernel, so the pass trace lists one application per lowered function; the pass's
// finishing body (run after the patterns) gathers those in source order into tile.kernels and checks the
// document with the SDK's reader (htp/tile_kernels.hpp), the one every backend reads it with, before it
// publishes it. The checker that typed the bodies builds the IR in the same walk; tile.typecheck ran before,
// so this pass reports nothing new.
#include <htp/tile_kernels.hpp>

#include <array>

#include "functions.hpp"
#include "kernel_checker.hpp"
#include "passes.hpp"

namespace tile {

namespace {

constexpr const char *kKernelAttr = "tile.kernel";

/// A module-level function with a tile body (a kernel, or a function another dialect marked tile.lower):
/// its register IR, as the node attribute tile.kernel. A function that has it is lowered already.
struct LowerTileFunction {
  static constexpr const char *name = "tile.lower-function";
  static constexpr std::array<const char *, 1> roots{"FunctionDef"};
  static constexpr int32_t benefit = 1;

  bool match_and_rewrite(htp::NodeRef fn, htp::PassContext &ctx) const {
    auto f = tile_function(fn);
    if (!f || fn.attr(kKernelAttr)) return false;
    CheckResult r = check_tile_function(ctx, *f, CheckOptions{.warnings = false, .record_types = false});
    fn.set_attr(kKernelAttr, r.kernel.dump());
    return true;
  }
};

} // namespace

void finish_lower(htp::PassContext &ctx) {
  ojson doc;
  doc["schema"] = htp::kTileKernelsSchema;
  ojson &kernels = doc["kernels"] = ojson::array();
  for (const auto &f : tile_functions(ctx.module().root())) {
    auto kernel = f.fn.attr_json<ojson>(kKernelAttr);
    if (!kernel) throw htp::PassError("tile.lower: function '" + f.fn.text("name").value_or("") + "' was not lowered");
    kernels.push_back(std::move(*kernel));
  }
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

std::vector<htp::PatternSpec> lower_patterns() { return {htp::pattern<LowerTileFunction>()}; }

} // namespace tile
