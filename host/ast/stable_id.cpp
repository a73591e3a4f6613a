#include "ast/stable_id.hpp"

#include <charconv>
#include <vector>

#include "ast/walk.hpp"

namespace htp::ast {
namespace {

constexpr std::string_view kModuleSymbol = "<module>";

const std::string &symbol_name(const Node &def) {
  static const std::string none;
  const std::string *name = def.text("name");
  return name ? *name : none;
}

// Visits the defs and classes directly in `scope` (not those nested in another def), pre-order.
template <class F> void for_each_def_in_scope(Node &scope, F &&f) {
  walk(scope, [&](Node &n) {
    if (&n == &scope || !defines_symbol(n)) return true;
    return f(n);
  });
}

// 1 for the first def of its name in `scope`, 2 for the second, ...
size_t occurrence(const Node &scope, const Node &def) {
  size_t seen = 0;
  bool found = false;
  for_each_def_in_scope(const_cast<Node &>(scope), [&](Node &n) {
    if (found) return false;
    if (symbol_name(n) == symbol_name(def)) ++seen;
    if (&n == &def) found = true;
    return false;
  });
  return seen;
}

Node *nth_def(Node &scope, std::string_view name, size_t n) {
  Node *hit = nullptr;
  size_t seen = 0;
  for_each_def_in_scope(scope, [&](Node &d) {
    if (!hit && symbol_name(d) == name && ++seen == n) hit = &d;
    return false;
  });
  return hit;
}

std::string symbol_component(const Node &def, size_t occurrence) {
  std::string s = symbol_name(def);
  if (occurrence > 1) s += "#" + std::to_string(occurrence);
  return s;
}

} // namespace

bool defines_symbol(const Node &node) {
  return node.kind() == Kind::FunctionDef || node.kind() == Kind::AsyncFunctionDef ||
         node.kind() == Kind::ClassDef;
}

std::string stable_id(const Node &node) {
  std::vector<const Node *> chain;
  for (const Node *n = &node; n; n = n->parent())
    chain.push_back(n);
  const Node *root = chain.back();
  const Node *scope = root;
  std::string symbol = defines_symbol(*root) ? symbol_name(*root) : std::string(kModuleSymbol);
  std::string path;
  for (size_t i = chain.size() - 1; i-- > 0;) {
    const Node *child = chain[i];
    if (defines_symbol(*child)) {
      std::string component = symbol_component(*child, occurrence(*scope, *child));
      symbol = scope == root && !defines_symbol(*root) ? component : symbol + "." + component;
      scope = child;
      path.clear();
      continue;
    }
    auto slot = child->slot();
    path += '/';
    path += child->parent()->field_info(slot->field).name;
    if (slot->index) path += "[" + std::to_string(*slot->index) + "]";
  }
  return symbol + path;
}

Node *find_by_id(Node &root, std::string_view id) {
  size_t slash = id.find('/');
  std::string_view symbol = id.substr(0, slash);
  std::string_view rest = slash == std::string_view::npos ? std::string_view{} : id.substr(slash + 1);

  Node *scope = &root;
  if (symbol != kModuleSymbol || defines_symbol(root)) {
    bool at_root = defines_symbol(root);
    while (!symbol.empty()) {
      size_t dot = symbol.find('.');
      std::string_view component = symbol.substr(0, dot);
      symbol = dot == std::string_view::npos ? std::string_view{} : symbol.substr(dot + 1);
      size_t n = 1;
      if (size_t hash = component.find('#'); hash != std::string_view::npos) {
        auto digits = component.substr(hash + 1);
        auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
        if (ec != std::errc() || end != digits.data() + digits.size() || n < 2) return nullptr;
        component = component.substr(0, hash);
      }
      if (at_root) {
        if (symbol_name(root) != component || n != 1) return nullptr;
        at_root = false;
        continue;
      }
      scope = nth_def(*scope, component, n);
      if (!scope) return nullptr;
    }
  }

  Node *node = scope;
  while (!rest.empty()) {
    size_t next = rest.find('/');
    std::string_view step = rest.substr(0, next);
    rest = next == std::string_view::npos ? std::string_view{} : rest.substr(next + 1);
    std::optional<size_t> index;
    if (size_t bracket = step.find('['); bracket != std::string_view::npos) {
      if (step.back() != ']') return nullptr;
      auto digits = step.substr(bracket + 1, step.size() - bracket - 2);
      size_t i = 0;
      auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), i);
      if (ec != std::errc() || end != digits.data() + digits.size()) return nullptr;
      index = i;
      step = step.substr(0, bracket);
    }
    const Value *v = node->field(step);
    if (!v) return nullptr;
    if (index) {
      auto *list = std::get_if<NodeList>(v);
      if (!list || *index >= list->size() || !(*list)[*index]) return nullptr;
      node = (*list)[*index].get();
    } else {
      auto *child = std::get_if<NodePtr>(v);
      if (!child) return nullptr;
      node = child->get();
    }
    if (defines_symbol(*node)) return nullptr; // a def is named by its symbol, never by a path
  }
  return node;
}

} // namespace htp::ast
