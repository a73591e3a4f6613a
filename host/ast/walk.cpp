#include "ast/walk.hpp"

#include <algorithm>
#include <utility>

namespace htp::ast {

size_t node_count(const Node &root) {
  size_t count = 0;
  walk(root, [&](const Node &) { ++count; });
  return count;
}

size_t depth(const Node &root) {
  size_t deepest = 0;
  std::vector<std::pair<const Node *, size_t>> stack{{&root, 1}};
  while (!stack.empty()) {
    auto [node, d] = stack.back();
    stack.pop_back();
    deepest = std::max(deepest, d);
    for (size_t f = 0; f < node->field_count(); ++f) {
      const Value &v = node->field(f);
      if (auto *child = std::get_if<NodePtr>(&v)) stack.emplace_back(child->get(), d + 1);
      if (auto *list = std::get_if<NodeList>(&v))
        for (const auto &c : *list)
          if (c) stack.emplace_back(c.get(), d + 1);
    }
  }
  return deepest;
}

} // namespace htp::ast
