// The host AST's functions in the _htp Python module.
#pragma once

#include <pybind11/pybind11.h>

namespace htp::python {

/// Adds the ast_* functions (JSON round trip, printing, the node table) to module `m`.
void bind_ast(pybind11::module_ &m);

} // namespace htp::python
