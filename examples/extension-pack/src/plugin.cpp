// The HTP extension pack: every kind of extension, from a third party, in one plugin (`ext-pack`).
// Built against the installed SDK only (find_package(HTP) + htp_add_plugin); see docs/writing-a-plugin.md.
#include "ext_pack.hpp"

namespace {

constexpr const char *kVersion = "0.1.0";

void register_elementwise(htp::Registrar &r) {
  r.add(htp::DialectSpec{.info = {.id = "ext.dialect", .version = kVersion, .summary = "@elementwise whole-tensor maps",
                                  .provides = {"Dialect.Ext"}},
                         .name = "ext",
                         .surface = {"elementwise"},
                         .scan = htp::pass_body<extpack::scan_ext>});
  // Target-independent: after it, an @elementwise function is a tile kernel any tile backend lowers.
  r.add(htp::PassSpec{.info = {.id = "ext.lower-elementwise", .version = kVersion,
                               .summary = "@elementwise functions -> tile kernels (loop nest over tiles)",
                               .provides = {extpack::kElementwiseLowered}, .accepts = {"Uses.Dialect(name=ext)"}},
                      .stage = HTP_STAGE_CANONICALIZE,
                      .applies_to = {"Uses.Dialect(name=ext)"},
                      .run = htp::pass_body<extpack::lower_elementwise>});
  // An analysis for any program with tile kernels, on every target.
  r.add(htp::PassSpec{.info = {.id = "ext.kernel-stats", .version = kVersion,
                               .summary = "loads, stores and other calls per tile kernel -> ext.kernel_stats",
                               .provides = {"IR.ExtKernelStats"}},
                      .stage = HTP_STAGE_ANALYZE,
                      .applies_to = {"Uses.Dialect(name=tile)"},
                      .run = htp::pass_body<extpack::kernel_stats>});
}

void register_axpby(htp::Registrar &r) {
  r.add(htp::IntrinsicSetSpec{.info = {.id = "ext.intrinsics", .version = kVersion, .provides = {"Intrinsics.Ext"}},
                              .set = "ext",
                              .ops = {"axpby"}});
  // One lowering per target family; each accepts the obligation it discharges. The rewrite works before
  // or after @elementwise lowering; the fused form runs at analyze, after it (it reads ext.tile_type).
  const std::vector<std::string> accepts = {"Uses.Intrinsic(set=ext,op=axpby)"};
  r.add(htp::PassSpec{.info = {.id = "ext.axpby-to-tile", .version = kVersion,
                               .summary = "ext.axpby -> tile.add(tile.muls(a, alpha), tile.muls(b, beta)) for PTO",
                               .accepts = accepts},
                      .stage = HTP_STAGE_CANONICALIZE,
                      .applies_to = {"Uses.Intrinsic(set=ext,op=axpby)", "Backend.PTO"},
                      .run = htp::pass_body<extpack::lower_axpby_to_tile>});
  r.add(htp::PassSpec{.info = {.id = "ext.axpby-cpu-ref", .version = kVersion,
                               .summary = "ext.axpby -> the fused foreign op ext.axpby for cpu-ref",
                               .accepts = accepts},
                      .stage = HTP_STAGE_ANALYZE,
                      .applies_to = {"Uses.Intrinsic(set=ext,op=axpby)", "Backend.CpuRef"},
                      .run = htp::pass_body<extpack::lower_axpby_cpu_ref>});
}

void register_place(htp::Registrar &r) {
  r.add(htp::DialectSpec{.info = {.id = "place.dialect", .version = kVersion, .summary = "Place(space) annotations"},
                         .name = "place",
                         .surface = {"Place"},
                         .scan = htp::pass_body<extpack::scan_place>});
  r.add(htp::LayoutSpec{.info = {.id = "place.layout", .version = kVersion, .provides = {"Layout.Place"}},
                        .kind = "place",
                        .facets = {"hw"}});
  r.add(htp::PassSpec{.info = {.id = "place.to-axe", .version = kVersion, .summary = "Place(...) -> layout.axe",
                               .provides = {"IR.Layout(state=converted,kind=place)"},
                               .accepts = {"Uses.Layout(kind=place)"}},
                      .stage = HTP_STAGE_CANONICALIZE,
                      .applies_to = {"Uses.Layout(kind=place)"},
                      .run = htp::pass_body<extpack::place_to_axe>});
  r.add(htp::PassSpec{.info = {.id = "place.from-axe", .version = kVersion,
                               .summary = "checked Axe layouts -> place.placements",
                               .provides = {"IR.PlacePlacements"}, .requires_ = {"IR.Layout(state=checked)"}},
                      .stage = HTP_STAGE_SCHEDULE,
                      .applies_to = {"Uses.Layout(kind=place)"},
                      .run = htp::pass_body<extpack::place_from_axe>});
}

void register_cpu_ref(htp::Registrar &r) {
  const std::vector<std::string> targets = {"cpu-ref"};
  r.add(htp::BackendSpec{.info = {.id = "cpu-ref.backend", .version = kVersion,
                                  .summary = "plain C++ loops for the host CPU", .provides = {"Backend.CpuRef"},
                                  // Tasks run one after another in program order: schedule directives
                                  // cannot change a result there, so all of them are accepted.
                                  .accepts = {"Uses.Dialect(name=tile)", "Uses.Dialect(name=wsp)",
                                              "Uses.Intrinsic(set=tile)", "Uses.Layout(kind=axe,facet=hw)",
                                              "Uses.Schedule"}},
                         .targets = targets});
  r.add(htp::PipelineSpec{.info = {.id = "cpu-ref.pipeline", .version = kVersion}, .targets = targets,
                          .passes = {"cpu-ref.emit"}});
  r.add(htp::PassSpec{.info = {.id = "cpu-ref.emit", .version = kVersion, .summary = "codegen/cpu-ref/program.cpp",
                               .provides = {"Artifact.CpuRef"},
                               .requires_ = {"IR.TileKernels"}},
                      .stage = HTP_STAGE_EMIT,
                      .run = htp::pass_body<extpack::emit_cpu_ref>});
  r.add(htp::BindingSpec{.info = {.id = "cpu-ref.binding", .version = kVersion,
                                  .summary = "builds the emitted C++ (content-hash cache) and runs it",
                                  .provides = {"Binding.CpuRef"}},
                         .targets = targets,
                         .run = htp::run_body<extpack::run_cpu_ref>});
}

void register_components(htp::Registrar &r) {
  register_elementwise(r);
  register_axpby(r);
  register_place(r);
  register_cpu_ref(r);
}

}  // namespace

HTP_DEFINE_PLUGIN("ext-pack", "0.1.0",
                  "Extension pack: @elementwise dialect, ext.axpby, Place layouts and the cpu-ref target",
                  register_components)
