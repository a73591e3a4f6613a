// A `@workload` function lowered to its task-graph entry (docs/dialects/wsp.md): parameters,
// intermediates, axes and the tree of loops, conditions, groups and kernel launches. The lowering
// accepts the canonical surface only (wsp.canonicalize runs first) and reports every construct it does
// not accept at its span.
#pragma once

#include "expr.hpp"

namespace wsp {

/// The workload entry `{"name", "span", "params", "intermediates", "axes", "body"}` (no schedule yet);
/// nullopt when errors were reported through `ctx`.
std::optional<json> lower_workload(htp::NodeRef fn, htp::PassContext &ctx);

} // namespace wsp
