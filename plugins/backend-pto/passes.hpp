// The backend's passes: `pto.legalize` (lower) checks the module's kernels, task graphs and CSP graphs
// against the intrinsic contracts and the hardware profile; `pto.emit` (emit) writes the package under
// codegen/pto/ and sets htp.entrypoints.
#pragma once

#include <htp/ast.hpp>

namespace ptobe {

void legalize_pass(htp::PassContext &ctx);
void emit_pass(htp::PassContext &ctx);

}  // namespace ptobe
