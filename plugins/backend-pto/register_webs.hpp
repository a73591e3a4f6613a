// Tile registers split into webs: a register name the program reuses for values that never meet (`t =
// load(x); h = matmul(t, w1); t = matmul(h, w2)`, or `h = matmul(h, w)`) is one register per value before
// backend-pto places registers by their role (an accumulator in L0C, an operand in L1/L0A/L0B, a vector tile
// in UB), which it decides per name.
#pragma once

#include <htp/tile_kernels.hpp>

namespace ptobe {

/// Renames, in kernel `k`, each tile register a matmul reads or writes that is defined for values no statement
/// reads together (a register only vector work touches keeps its in-place updates, `d = exp(d)`): a
/// definition and every definition reaching a read alongside it form a web (a read after an `if` joins the
/// branches' definitions; a loop's read of what its previous iteration wrote joins the two), and each web but
/// the first of a name gets a register of its own, `<name>_<n>`, declared like the name. A matmul
/// accumulating into its destination keeps the destination's web.
void split_register_webs(htp::TileKernel &k);

} // namespace ptobe
