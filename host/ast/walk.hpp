// Pre-order traversal of a tree, without recursion (trees may be thousands of nodes deep).
#pragma once

#include <cstddef>
#include <type_traits>
#include <variant>
#include <vector>

#include "ast/node.hpp"

namespace htp::ast {

/// Calls `visit(node)` on `root` and on every node below it, pre-order, in field order. When `visit`
/// returns bool, false skips the node's children. `N` is Node or const Node.
template <class N, class F> void walk(N &root, F &&visit) {
  std::vector<N *> stack{&root};
  while (!stack.empty()) {
    N *node = stack.back();
    stack.pop_back();
    if constexpr (std::is_same_v<std::invoke_result_t<F &, N &>, bool>) {
      if (!visit(*node)) continue;
    } else {
      visit(*node);
    }
    for (size_t f = node->field_count(); f-- > 0;) {
      const Value &v = node->field(f);
      if (auto *child = std::get_if<NodePtr>(&v)) {
        stack.push_back(child->get());
      } else if (auto *list = std::get_if<NodeList>(&v)) {
        for (size_t i = list->size(); i-- > 0;)
          if ((*list)[i]) stack.push_back((*list)[i].get());
      }
    }
  }
}

/// The number of nodes in the tree under `root`, `root` included.
size_t node_count(const Node &root);

/// The number of nodes on the longest path from `root` down to a leaf (a lone node has depth 1).
size_t depth(const Node &root);

} // namespace htp::ast
