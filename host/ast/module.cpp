#include "ast/module.hpp"

namespace htp::ast {

Module Module::clone() const {
  return Module{file, source, root ? root->clone() : nullptr, attrs};
}

bool equal(const Module &a, const Module &b) {
  if (a.file != b.file || a.source != b.source || a.attrs != b.attrs) return false;
  if (!a.root || !b.root) return !a.root && !b.root;
  return equal(*a.root, *b.root);
}

} // namespace htp::ast
