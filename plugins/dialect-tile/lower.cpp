// tile.lower: the register IR of every kernel and of every function marked `tile.lower`, as the module
// attribute tile.kernels (htp.tile.kernels.v1, docs/ir-contracts.md §4). The pass body starts the document;
// the pattern tile.lower-function lowers one function at a time through the host's rewrite driver and
// appends its IR, so the pass trace lists one application per lowered function. The checker that typed the
// bodies builds the IR in the same walk; tile.typecheck ran before, so this pass reports nothing new. Each
// kernel is checked with the SDK's reader (htp/tile_kernels.hpp), the one every backend reads it with,
// before it is published.
#include <htp/tile_kernels.hpp>

#include <array>

#include "functions.hpp"
#include "kernel_checker.hpp"
#include "passes.hpp"

namespace tile {

namespace {

ojson empty_document() {
  ojson doc;
  doc["schema"] = htp::kTileKernelsSchema;
  doc["kernels"] = ojson::array();
  return doc;
}

/// A module-level function with a tile body (a kernel, or a function another dialect marked tile.lower):
/// its register IR, appended to tile.kernels. The driver's first generation offers the module's functions
/// in pre-order, so the kernels stay in source order; the rewrite edits no node, so nothing is offered
/// again.
struct LowerTileFunction {
  static constexpr const char *name = "tile.lower-function";
  static constexpr std::array<const char *, 1> roots{"FunctionDef"};
  static constexpr int32_t benefit = 1;

  bool match_and_rewrite(htp::NodeRef fn, htp::PassContext &ctx) const {
    auto f = tile_function(fn);
    if (!f) return false;
    auto module = ctx.module();
    ojson doc = module.attr_json<ojson>(htp::kTileKernelsAttribute).value_or(empty_document());
    ojson &kernels = doc["kernels"];
    CheckResult r = check_tile_function(ctx, *f, CheckOptions{.warnings = false, .record_types = false});
    const std::string at = "/kernels/" + std::to_string(kernels.size());
    try {
      htp::tile_kernels_reader::Reader<ojson> reader{std::string(htp::kTileKernelsAttribute)};
      (void)htp::tile_kernels_reader::read_kernel(reader, r.kernel, at);
    } catch (const htp::IrDocumentError &e) {
      htp::SourceSpan span = e.span() ? e.span()->source_span(module.file()) : fn.source_span();
      htp::Host(ctx.api()).error(ctx.diag(), "tile.internal",
                                 std::string("tile.lower built an invalid tile.kernels (a dialect-tile bug): ") + e.what(),
                                 span);
      return true;  // the error stops the pass
    }
    kernels.push_back(std::move(r.kernel));
    module.set_attr(htp::kTileKernelsAttribute, doc.dump());
    return true;
  }
};

} // namespace

void begin_lower(htp::PassContext &ctx) { ctx.module().set_attr(htp::kTileKernelsAttribute, empty_document().dump()); }

std::vector<htp::PatternSpec> lower_patterns() { return {htp::pattern<LowerTileFunction>()}; }

} // namespace tile
