// Stable node ids: symbol path + structural position, recomputable after any edit.
#pragma once

#include <string>
#include <string_view>

#include "ast/node.hpp"

namespace htp::ast {

/// The stable id of `node`: the qualified name of its innermost enclosing def or class ("<module>" at
/// module level; the n-th def or class of one name in one scope gets the suffix "#n" from n = 2 on),
/// then the structural path from there, e.g. `vector_add/body[2]/value`, `Model.forward/args/args[1]`,
/// `<module>/body[0]/value`. A def or class is named by its qualified name alone (`vector_add`).
std::string stable_id(const Node &node);

/// The node under `root` whose stable id is `id`, or nullptr.
Node *find_by_id(Node &root, std::string_view id);

/// Whether `node` opens a symbol scope (FunctionDef, AsyncFunctionDef, ClassDef).
bool defines_symbol(const Node &node);

} // namespace htp::ast
