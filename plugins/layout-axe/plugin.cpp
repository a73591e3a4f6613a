// The layout-axe plugin: layouts as types. Dialect `layout` (the surface Layout, relayout and the
// collectives, and the scanner of Uses.Layout obligations), layout kind `axe` with facets dist, mem and
// hw, and the passes axe.infer (analyze) and axe.check (typecheck). docs/dialects/layout-axe.md.
#include "passes.hpp"

namespace {

constexpr const char *kVersion = "0.1.0";
constexpr const char *kUsesAxe = "Uses.Layout(kind=axe)";

void register_components(htp::Registrar &r) {
  r.add(htp::DialectSpec{
      .info = {.id = "layout.dialect",
               .version = kVersion,
               .summary = "Layout annotations Tensor[...] @ Layout(...), relayout and collectives",
               .provides = {"Dialect.Layout"}},
      .name = "layout",
      .surface = {"Layout", "relayout", "allreduce", "allgather", "reduce_scatter"},
      .scan = htp::pass_body<htp::axe::scan>});
  r.add(htp::LayoutSpec{.info = {.id = "layout.axe",
                                 .version = kVersion,
                                 .summary = "Axe layouts: shard/replica iters and offsets over named axes",
                                 .provides = {"Layout.Axe"}},
                        .kind = "axe",
                        .facets = {"dist", "mem", "hw"}});
  r.add(htp::PassSpec{.info = {.id = "axe.infer",
                               .version = kVersion,
                               .summary =
                                   "Layouts of parameters and values, local shapes, join/contraction/effect "
                                   "rules; layout.signatures",
                               .provides = {"IR.Layout(state=inferred)"}},
                      .stage = HTP_STAGE_ANALYZE,
                      .applies_to = {kUsesAxe},
                      .run = htp::pass_body<htp::axe::infer>});
  r.add(htp::PassSpec{.info = {.id = "axe.check",
                               .version = kVersion,
                               .summary =
                                   "Pending reductions discharged, stores agree, footprints fit the memory "
                                   "spaces of the target",
                               .provides = {"IR.Layout(state=checked)"},
                               .requires_ = {"IR.Layout(state=inferred)"}},
                      .stage = HTP_STAGE_TYPECHECK,
                      .applies_to = {kUsesAxe},
                      .run = htp::pass_body<htp::axe::check>});
  // Backends that run mapped kernels order their first pass after it with ?IR.Layout(state=lowered).
  r.add(htp::PassSpec{.info = {.id = "axe.lower",
                               .version = kVersion,
                               .summary = "Collectives of mapped kernels as exchanges through global memory: "
                                          "each such kernel cut into parts launched in order",
                               .provides = {"IR.Layout(state=lowered)"},
                               .requires_ = {"IR.Layout(state=checked)", "?IR.TileKernels", "?IR.WSPTaskGraph"}},
                      .stage = HTP_STAGE_LOWER,
                      .applies_to = {kUsesAxe},
                      .run = htp::pass_body<htp::axe::lower>});
}

} // namespace

HTP_DEFINE_PLUGIN("layout-axe", "0.1.0", "Axe layouts as types: distribution, memory and hardware facets",
                  register_components)
