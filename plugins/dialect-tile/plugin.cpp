// The dialect-tile plugin: the `tile` dialect (kernels, tile and tensor types), its portable intrinsic set
// and the passes that fold, type and lower kernel bodies. docs/dialects/tile.md is the user's reference.
#include <htp/ast.hpp>

#include "passes.hpp"
#include "surface.hpp"

namespace {

constexpr const char *kVersion = "0.2.0";
constexpr const char *kUsesTile = "Uses.Dialect(name=tile)";

void register_components(htp::Registrar &r) {
  r.add(htp::DialectSpec{
      .info = {.id = "tile.dialect",
               .version = kVersion,
               .summary = "Tile kernels: @kernel, Tile/Tensor/Scalar types, In/Out/InOut/Constexpr",
               .provides = {"Dialect.Tile"}},
      .name = "tile",
      .surface = tile::dialect_names(),
      .scan = htp::pass_body<tile::scan>});
  r.add(htp::IntrinsicSetSpec{.info = {.id = "tile.intrinsics",
                                       .version = kVersion,
                                       .summary = "Portable tile intrinsics that every backend lowers",
                                       .provides = {"Intrinsics.Tile"}},
                              .set = "tile",
                              .ops = tile::intrinsic_names()});
  r.add(htp::PassSpec{.info = {.id = "tile.fold",
                               .version = kVersion,
                               .summary = "Fold captured constants and integer arithmetic in kernels",
                               .provides = {"IR.TileFolded"}},
                      .stage = HTP_STAGE_CANONICALIZE,
                      .applies_to = {kUsesTile},
                      .patterns = tile::fold_patterns()});
  r.add(
      htp::PassSpec{.info = {.id = "tile.typecheck",
                             .version = kVersion,
                             .summary = "Type kernel bodies, check intrinsic contracts and In/Out discipline",
                             .provides = {"IR.TileTyped"},
                             .requires_ = {"IR.TileFolded"}},
                    .stage = HTP_STAGE_TYPECHECK,
                    .applies_to = {kUsesTile},
                    .run = htp::pass_body<tile::typecheck>});
  r.add(htp::PassSpec{.info = {.id = "tile.lower",
                               .version = kVersion,
                               .summary = "Lower tile bodies to the register IR tile.kernels",
                               .provides = {"IR.TileKernels"},
                               .requires_ = {"IR.TileTyped"}},
                      .stage = HTP_STAGE_LOWER,
                      .applies_to = {kUsesTile},
                      .patterns = tile::lower_patterns(),
                      .finish = htp::pass_body<tile::finish_lower>});
}

} // namespace

HTP_DEFINE_PLUGIN("dialect-tile", "0.2.0",
                  "Tile programming surface: kernels, tile and tensor types, portable intrinsics",
                  register_components)
