// Builds synthetic components for resolver tests without plugins.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "registry/component.hpp"
#include "registry/registry.hpp"

namespace htp::testing {

/// A fluent Component: `pass("a", PassStage::Lower).provides({"IR.X"}).requires({"IR.Y"})`.
class ComponentBuilder {
public:
  ComponentBuilder(ComponentKind kind, std::string id) {
    c_.kind = kind;
    c_.id = std::move(id);
    c_.version = "1.0.0";
    c_.plugin = PluginRef{"plugin-" + c_.id, "1.0.0", "/plugins/libplugin-" + c_.id + ".so", "sha-" + c_.id};
  }
  ComponentBuilder &version(std::string v) { return c_.version = std::move(v), *this; }
  ComponentBuilder &plugin(std::string name, std::string version = "1.0.0") {
    c_.plugin = PluginRef{name, version, "/plugins/lib" + name + ".so", "sha-" + name + "-" + version};
    return *this;
  }
  ComponentBuilder &provides(std::vector<std::string> v) { return c_.provides = std::move(v), *this; }
  ComponentBuilder &requires_(std::vector<std::string> v) { return c_.requires_ = std::move(v), *this; }
  ComponentBuilder &conflicts(std::vector<std::string> v) { return c_.conflicts = std::move(v), *this; }
  ComponentBuilder &accepts(std::vector<std::string> v) { return c_.accepts = std::move(v), *this; }
  ComponentBuilder &applies_to(std::vector<std::string> v) { return c_.applies_to = std::move(v), *this; }
  ComponentBuilder &invalidates(std::vector<std::string> v) { return c_.invalidates = std::move(v), *this; }
  ComponentBuilder &before(std::vector<std::string> v) { return c_.before = std::move(v), *this; }
  ComponentBuilder &after(std::vector<std::string> v) { return c_.after = std::move(v), *this; }
  ComponentBuilder &targets(std::vector<std::string> v) { return c_.targets = std::move(v), *this; }
  ComponentBuilder &passes(std::vector<std::string> v) { return c_.passes = std::move(v), *this; }
  ComponentBuilder &stage(PassStage s) { return c_.stage = s, *this; }
  ComponentBuilder &priority(int32_t p) { return c_.priority = p, *this; }
  ComponentBuilder &name(std::string n) { return c_.name = std::move(n), *this; }
  ComponentBuilder &names(std::vector<std::string> v) { return c_.names = std::move(v), *this; }
  Component build() const { return c_; }
  operator Component() const { return c_; }

private:
  Component c_;
};

inline ComponentBuilder pass(std::string id, PassStage stage = PassStage::Analyze) {
  ComponentBuilder b(ComponentKind::Pass, std::move(id));
  b.stage(stage);
  return b;
}
inline ComponentBuilder backend(std::string id, std::vector<std::string> targets, int32_t priority = 0) {
  ComponentBuilder b(ComponentKind::Backend, std::move(id));
  b.targets(std::move(targets)).priority(priority);
  return b;
}
inline ComponentBuilder binding(std::string id, std::vector<std::string> targets, int32_t priority = 0) {
  ComponentBuilder b(ComponentKind::Binding, std::move(id));
  b.targets(std::move(targets)).priority(priority);
  return b;
}
inline ComponentBuilder pipeline(std::string id, std::vector<std::string> targets,
                                 std::vector<std::string> passes) {
  ComponentBuilder b(ComponentKind::Pipeline, std::move(id));
  b.targets(std::move(targets)).passes(std::move(passes));
  return b;
}
inline ComponentBuilder dialect(std::string id, std::string name) {
  ComponentBuilder b(ComponentKind::Dialect, std::move(id));
  b.name(std::move(name));
  return b;
}
inline ComponentBuilder intrinsic_set(std::string id, std::string set, std::vector<std::string> ops) {
  ComponentBuilder b(ComponentKind::IntrinsicSet, std::move(id));
  b.name(std::move(set)).names(std::move(ops));
  return b;
}
inline ComponentBuilder layout(std::string id, std::string kind, std::vector<std::string> facets) {
  ComponentBuilder b(ComponentKind::Layout, std::move(id));
  b.name(std::move(kind)).names(std::move(facets));
  return b;
}

/// Adds every component, failing loudly on a registry error.
inline void add_all(Registry &r, const std::vector<Component> &components) {
  for (const Component &c : components) {
    auto added = r.add(c);
    if (!added) throw std::runtime_error(added.error().render());
  }
}

} // namespace htp::testing
