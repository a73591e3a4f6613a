// Kernel launches inside a workload: `k[b, h](A.tile(b, h), ...)` or `k(A[...], n=...)`, bound and
// checked against the kernel's `tile.signature` (arity, In/Out direction, dtype, tile shape of every
// view) and lowered to a task node of the task graph.
#pragma once

#include "expr.hpp"

namespace wsp {

/// The tile kernel a call launches (its FunctionDef), an empty view when the callee is not a captured
/// function of the module; throws WspError when it names a captured function that is not a kernel.
htp::NodeRef launched_kernel(htp::NodeRef call, const htp::ModuleRef &m);

/// The arguments of `call` bound to the parameters of `sig` (`{"params": [...]}`; Constexpr parameters
/// are not bound): positionally, then by keyword. Throws WspError (`wsp.arity`, `wsp.argument`) naming
/// `callee` ("kernel 'k'", "workload 'w'").
std::vector<std::pair<json, htp::NodeRef>>
bind_arguments(htp::NodeRef call, const json &sig, const std::string &callee, bool leaves_slot = false);

/// The task node `{"kind": "task", "id", "kernel", "span", "index"?, "args", "reads", "writes"}` of a
/// launch of `kernel`; throws WspError (`wsp.arity`, `wsp.tile-shape`, `wsp.direction`, `wsp.dtype`,
/// `wsp.argument`) at the offending argument.
///
/// In a pipe stage, `send(ch, k(...))` leaves one `Out` tensor parameter unbound: it receives the slot of
/// channel `slot` (`{"param", "channel", "dir": "out", "shape"}`); an item of a channel passed to an `In`
/// tensor parameter is `{"param", "channel", "dir": "in", "shape"}` (docs/dialects/wsp.md).
json lower_kernel_call(htp::NodeRef call, htp::NodeRef kernel, const Env &env, const std::string &id,
                       const std::string &slot = "");

} // namespace wsp
