// Loading the JSON form of the host AST (htp.ast.v1, docs/ast-json.md), validated against the grammar.
#pragma once

#include <cstddef>
#include <string_view>

#include "ast/module.hpp"
#include "diag/diagnostic.hpp"

namespace htp::ast {

/// The format tag every htp.ast.v1 document carries in its "format" key.
inline constexpr std::string_view kAstJsonFormat = "htp.ast.v1";

/// Bounds on what a document may hold, so hostile input cannot exhaust the stack or memory.
struct JsonLimits {
  size_t max_depth = 5000;       ///< Deepest node nesting accepted (Python's own parser stops near 3000).
  size_t max_nodes = 20'000'000; ///< Most nodes in one document.
};

/// Loads an htp.ast.v1 document. Malformed or truncated JSON, an unknown node type, a missing or extra
/// field, a value of the wrong kind and an exceeded limit all give a diagnostic whose message starts with
/// the JSON path of the problem (`$.root.body[2].value.func: expected a node, got a string`); syntax
/// errors also carry their line and column, with `json_name` as the file. Never throws.
Expected<Module> load_json(std::string_view text, const JsonLimits &limits = {},
                           std::string_view json_name = {});

} // namespace htp::ast
