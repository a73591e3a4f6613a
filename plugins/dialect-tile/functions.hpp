// Which functions of a module have tile bodies, the names they bind, and how a call names an intrinsic.
// Shared by the scanner, tile.fold, tile.typecheck and tile.lower so that all agree.
#pragma once

#include <htp/ast.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace tile {

/// A node attribute parsed as JSON (null when absent or malformed).
nlohmann::json node_attr_json(htp::NodeRef n, std::string_view key);

/// A tile kernel: its `htp.dialect` attribute (set by the capture) is "tile", or, without that
/// attribute, a decorator spells `kernel` / `tile.kernel` (also called: `@kernel(mapping=[2, 2])`).
bool is_tile_kernel(htp::NodeRef fn);
/// The `kind` of a `tile.lower` mark another dialect set on `fn` ("process"), or nullopt.
std::optional<std::string> tile_lower_kind(htp::NodeRef fn);

struct TileFunction {
  htp::NodeRef fn;
  std::string kind; ///< "kernel", or the kind of the tile.lower mark
};
/// The module's functions with tile bodies, in source order.
std::vector<TileFunction> tile_functions(htp::NodeRef root);

/// Names bound inside `fn`: parameters, assignment / loop targets and names of nested definitions.
std::set<std::string> bound_names(htp::NodeRef fn);

/// The intrinsic a call names, or nullopt: `op(...)` (an imported intrinsic not rebound in the function) or
/// `tile.op(...)` (also `htp.dialects.tile.op(...)`: any module path ending in `tile`). With
/// `other_dialect` (the functions of other dialects) the builtins abs / max / min stay Python's.
std::optional<std::string> intrinsic_callee(htp::NodeRef call, const std::set<std::string> &bound,
                                            bool other_dialect = false);

/// The captured global constants (`htp.capture.constants`), an empty object when absent.
nlohmann::json captured_constants(const htp::ModuleRef &m);

/// The span of `n` as contract JSON {file, line, col, end_line, end_col}.
nlohmann::ordered_json span_json(htp::NodeRef n);

} // namespace tile
