// The layout-axe scanner and passes (bodies for htp::pass_body).
#pragma once

#include <htp/ast.hpp>
#include <nlohmann/json.hpp>

namespace htp::axe {

class Reporter;

/// Scanner of dialect `layout`: Uses.Layout(kind=axe, facet=dist|mem|hw) at every layout expression and
/// collective call.
void scan(htp::PassContext &ctx);
/// axe.infer (analyze): layouts of parameters and values, local shapes, join/contraction/effect rules;
/// node attributes layout.type, layout.local_shape, layout.store, layout.return, layout.alloc and the
/// module attribute layout.signatures.
void infer(htp::PassContext &ctx);
/// axe.check (typecheck): pending effects discharged before stores and returns, stores agree with their
/// tensor's layout, hardware-facet footprints fit the target's memory spaces.
void check(htp::PassContext &ctx);

/// axe.lower (lower): the collectives of mapped kernels become exchanges through global memory — each such
/// kernel is cut into parts launched in order (tile.kernels, layout.signatures and wsp.task_graph rewritten).
void lower(htp::PassContext &ctx);

/// Sets the module attribute layout.signatures to `doc` after reading it with the SDK's reader
/// (htp/layout_signatures.hpp, the one backends read it with); a document it rejects is a layout-axe bug,
/// reported as layout.internal at the module, and is not published.
void publish_signatures(htp::PassContext &ctx, Reporter &r, const nlohmann::ordered_json &doc);

/// The names of the collectives and relayout in kernel bodies.
bool is_collective(const std::string &callee);

} // namespace htp::axe
