// One compile unit's tree: the root node plus the source it came from and module-level attributes.
#pragma once

#include <string>

#include "ast/node.hpp"

namespace htp::ast {

struct Module {
  std::string file;   ///< The source file name, as every span of the tree names it.
  std::string source; ///< The source text; empty when not kept.
  NodePtr root;       ///< The tree, normally a Module node (a mod); may be any node.
  Attributes attrs;   ///< Module-level attributes with namespaced keys ("csp.graph", "wsp.task_graph").

  /// A deep copy.
  Module clone() const;
};

/// Whether two modules are equal: file, source, attributes and trees (spans and node attributes included).
bool equal(const Module &a, const Module &b);

} // namespace htp::ast
