// The registry: every component the loaded plugins registered, deep-copied, keyed by unique id.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "diag/diagnostic.hpp"
#include "registry/component.hpp"

namespace htp {

class Registry {
public:
  Registry() = default;
  Registry(const Registry &) = delete;
  Registry &operator=(const Registry &) = delete;
  Registry(Registry &&) = default;
  Registry &operator=(Registry &&) = default;

  /// Adds a component; an error naming both plugins when its id is already registered, or naming
  /// the field when the descriptor is malformed (empty id, bad capability text, ...).
  Expected<const Component *> add(Component c);

  /// The error add() would report for `c` (empty id, duplicate id naming both plugins), if any.
  std::optional<Diagnostic> check_insertable(const Component &c) const;

  /// The component with this id, or nullptr.
  const Component *find(std::string_view id) const;

  /// All components in registration order.
  const std::vector<std::unique_ptr<Component>> &components() const { return components_; }

  /// Components of one kind, in registration order.
  std::vector<const Component *> of_kind(ComponentKind kind) const;

  /// Records the file digest of `plugin` in each of its components' PluginRef.
  void set_plugin_sha256(std::string_view plugin, const std::string &sha256);

  /// Components registered by one plugin, in registration order.
  std::vector<const Component *> of_plugin(std::string_view plugin) const;

  size_t size() const { return components_.size(); }

private:
  std::vector<std::unique_ptr<Component>> components_;
  std::map<std::string, const Component *, std::less<>> by_id_;
  std::map<std::pair<ComponentKind, std::string>, const Component *> by_name_;  ///< first of each (kind, name)
};

}  // namespace htp
