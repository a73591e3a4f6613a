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
/// `stmt` as a function with a tile body: a FunctionDef of the module's body that is a kernel or carries a
/// tile.lower mark; nullopt otherwise.
std::optional<TileFunction> tile_function(htp::NodeRef stmt);
/// The module's functions with tile bodies, in source order.
std::vector<TileFunction> tile_functions(htp::NodeRef root);

/// Names bound inside `fn`: parameters, assignment / loop targets and names of nested definitions.
std::set<std::string> bound_names(htp::NodeRef fn);

/// A call of an intrinsic: its set ("tile" for the portable intrinsics, "pto", "aie", ...) and op.
struct IntrinsicCall {
  std::string set;
  std::string op;
  bool portable() const { return set == "tile"; }
  std::string qualified() const { return set + "." + op; }
};

/// How calls read in a function: kernels call nothing but intrinsics; functions of other dialects
/// (workloads, processes) also call their own dialect's functions and Python's builtins.
struct CallRules {
  bool python_builtins = false; ///< abs / max / min are Python's (the scanner, in other dialects' functions)
  bool bare_set_modules = true; ///< `S.op(...)` with a lone free name S is a vendor intrinsic (kernels)
  static CallRules kernel() { return {false, true}; }
  static CallRules other_dialect() { return {true, false}; }
};

/// What the capture recorded about the globals a compile unit reads (module attribute `htp.capture`):
/// constants by name, and the module each module-valued global is bound to (`P` -> `htp.intrinsics.pto`
/// after `from htp.intrinsics import pto as P`; `math` -> `math`). Both are empty objects when absent.
struct CapturedGlobals {
  nlohmann::json constants = nlohmann::json::object();
  nlohmann::json modules = nlohmann::json::object();
};

/// The intrinsic a call names, or nullopt (docs/intrinsics.md §2):
///  * portable: `op(...)` (an imported intrinsic not rebound in the function; abs / max / min stay
///    Python's under `python_builtins`) or `tile.op(...)` (any module path ending in `tile`);
///  * vendor: `S.op(...)` with S a name the function does not bind and not a captured constant (under
///    `bare_set_modules`), or `htp.intrinsics.S.op(...)` / `intrinsics.S.op(...)`: op `op` of set S.
/// When the capture recorded the module a path's first name is bound to, that module decides exactly:
/// `htp.intrinsics.S` is set S under any alias, `htp.dialects.tile` is portable, `htp.dialects.D` is set D
/// where bare names are sets, and any other module (`math`, `numpy`) names no intrinsic.
std::optional<IntrinsicCall> intrinsic_call(htp::NodeRef call, const std::set<std::string> &bound,
                                            const CapturedGlobals &globals, CallRules rules);

/// The captured globals (module attribute `htp.capture`); empty when absent or malformed.
CapturedGlobals captured_globals(const htp::ModuleRef &m);
/// The captured global constants (`htp.capture.constants`), an empty object when absent.
nlohmann::json captured_constants(const htp::ModuleRef &m);

/// The span of `n` as contract JSON {file, line, col, end_line, end_col}.
nlohmann::ordered_json span_json(htp::NodeRef n);

} // namespace tile
