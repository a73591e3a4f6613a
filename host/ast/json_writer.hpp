// Writing the JSON form of the host AST (htp.ast.v1, docs/ast-json.md).
#pragma once

#include <string>

#include "ast/module.hpp"

namespace htp::ast {

/// The htp.ast.v1 document of `module`. Deterministic: keys sorted, numbers spelled as Python's repr, so
/// the text equals Python's json.dumps(doc, sort_keys=True, ensure_ascii=False) with separators (",", ":")
/// when `indent` < 0, or with indent=`indent` otherwise. Invalid UTF-8 in a string is written as U+FFFD.
std::string dump_json(const Module &module, int indent = -1);

} // namespace htp::ast
