// Rendering a tree back to Python source, the way Python 3.11's ast.unparse writes it.
#pragma once

#include <string>

#include "ast/module.hpp"
#include "ast/node.hpp"

namespace htp::ast {

/// Python source for `node` — a module, statement, expression, pattern or any other node — as
/// Python 3.11's ast.unparse(node) writes it (precedence-driven parentheses, repr-style literals, 3.11
/// f-string quoting, type comments), so ast.parse of the text gives back a tree equal to `node`.
/// Total: a required field left null prints as `<missing>`, where the result is not valid Python.
/// Unlike ast.unparse, an Interactive module prints all its statements, not only the last.
std::string to_source(const Node &node);

/// to_source of the module's root; empty for a module without a root.
std::string to_source(const Module &module);

} // namespace htp::ast
