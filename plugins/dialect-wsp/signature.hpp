// Types at the workload boundary: workload parameters read from their annotations (`In[Tensor[...]]`,
// `Scalar[i64]`, symbolic dims) and kernel signatures read from the tile plugin's `tile.signature`.
#pragma once

#include <vector>
#include "expr.hpp"

namespace wsp {

/// A workload parameter `{"name", "dir", "type"}` (docs/ir-contracts.md §1) from its annotation; an
/// unannotated parameter (or `int`) is a runtime i64 scalar. Throws WspError (`wsp.type`).
/// A workload parameter's type. A layout on it (`Tensor[...] @ Layout(...)`), which workloads do not take, is
/// a wsp.layout error: thrown, or appended to `layout_errors` when given (the parameter then parses without it,
/// so the workload's body is checked as written).
json parse_workload_param(htp::NodeRef arg, const json &constants, std::vector<WspError> *layout_errors = nullptr);

/// The tensor type of an annotation `Tensor[d0, ..., dtype]` (an intermediate declaration); throws.
json parse_tensor_type(htp::NodeRef annotation, const json &constants);

/// The `tile.signature` of the kernel FunctionDef `kernel`, checked for its shape; throws WspError
/// (`wsp.kernel`) at `call` when it is missing (tile.typecheck did not run) or malformed.
json kernel_signature(htp::NodeRef kernel, htp::NodeRef call);

/// The declaration a tensor parameter entry `{"name", "dir", "type"}` stands for.
TensorDecl tensor_decl(const json &param, bool intermediate);

} // namespace wsp
