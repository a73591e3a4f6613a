// The pass bodies of the tile dialect (registered in plugin.cpp).
#pragma once

#include <htp/ast.hpp>

#include <vector>

namespace tile {

/// Scanner: Uses.Dialect(name=tile) and Uses.Intrinsic(set=tile,op=X) obligations (scan.cpp).
void scan(htp::PassContext &ctx);
/// tile.fold, patterns: captured constants read by kernels become literals, and integer arithmetic on
/// literals inside kernels is folded (fold.cpp).
std::vector<htp::PatternSpec> fold_patterns();
/// tile.typecheck: tile.signature and tile.type, every diagnostic of kernel bodies (typecheck.cpp).
void typecheck(htp::PassContext &ctx);
/// tile.lower: the module attribute tile.kernels (lower.cpp). One pattern application per function with a
/// tile body lowers it (node attribute tile.kernel); the finishing body gathers them in source order.
std::vector<htp::PatternSpec> lower_patterns();
void finish_lower(htp::PassContext &ctx);

} // namespace tile
