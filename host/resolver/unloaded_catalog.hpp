// Components of plugins that are known from their manifests but not loaded: the resolver never selects
// them, it only names them ("load plugin X") when they would supply what is missing.
#pragma once

#include <string>
#include <vector>

#include <htp/capability.hpp>

#include "registry/component.hpp"

namespace htp {

class UnloadedCatalog {
public:
  /// Parses what the known components provide and accept; malformed entries are skipped.
  explicit UnloadedCatalog(const std::vector<Component> &known);

  /// One hint per known component providing a fact `pattern` matches.
  std::vector<std::string> providers_of(const Capability &pattern) const;
  /// One hint per known component accepting `obligation`, naming the targets of backends and bindings.
  std::vector<std::string> acceptors_of(const Capability &obligation) const;
  /// One hint per known backend, binding or pipeline that claims `target`.
  std::vector<std::string> claiming(const std::string &target) const;
  /// One hint per known component of `kind` whose name is `name` (a dialect, intrinsic set or layout).
  std::vector<std::string> named(ComponentKind kind, const std::string &name) const;
  /// One hint per known component with this id.
  std::vector<std::string> with_id(const std::string &id) const;
  /// Every target the known components claim.
  std::vector<std::string> targets() const;

private:
  struct Entry {
    const Component *component;
    std::vector<Capability> provides;
    std::vector<Capability> accepts;
  };
  std::vector<Entry> entries_;
};

/// "plugin 'p' (/path/libp.so)" — how a hint names the file to load.
std::string describe_plugin_file(const PluginRef &plugin);

} // namespace htp
