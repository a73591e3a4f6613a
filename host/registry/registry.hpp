// The registry: every component the loaded plugins registered, deep-copied, keyed by unique id.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <array>
#include <span>

#include "diag/diagnostic.hpp"
#include "registry/component.hpp"
#include "registry/text_arena.hpp"

namespace htp {

/// What the resolver's index reads of every component, in registration order: its kind, and its id, name
/// and capability texts as views into one arena, one after another. The Component objects and their
/// strings are separate heap blocks, scattered once there are tens of thousands; an index reading this
/// instead touches a few adjacent cache lines per component. Layout only: the texts are as registered.
struct PackedComponent {
  static constexpr size_t kLists = 6; ///< provides, requires, conflicts, accepts, applies_to, invalidates
  const Component *component = nullptr;
  ComponentKind kind = ComponentKind::Dialect;
  uint32_t first = 0; ///< Index of its id in Registry::packed_texts(); its name, then the lists follow.
  std::array<uint32_t, kLists> sizes{}; ///< Entries per list.
  /// Its texts in all: the id, the name and every list's entries.
  size_t text_count() const {
    size_t n = 2;
    for (uint32_t s : sizes)
      n += s;
    return n;
  }
};

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

  /// Every component packed for reading in bulk, in registration order (parallel to components()).
  const std::vector<PackedComponent> &packed() const { return packed_; }
  /// The texts PackedComponent::first indexes.
  std::span<const std::string_view> packed_texts() const { return packed_texts_; }
  /// The id of one packed component (its first text).
  std::string_view packed_id(const PackedComponent &p) const { return packed_texts_[p.first]; }

private:
  std::vector<std::unique_ptr<Component>> components_;
  std::vector<PackedComponent> packed_;
  std::vector<std::string_view> packed_texts_;
  TextArena arena_;
  std::map<std::string, const Component *, std::less<>> by_id_;
  std::map<std::pair<ComponentKind, std::string>, const Component *> by_name_;  ///< first of each (kind, name)
};

}  // namespace htp
