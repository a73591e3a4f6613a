// The registry seen by the resolver: every component's capability text parsed once, facts interned, and
// providers, applies-to patterns, conflicts and targets indexed by Namespace.Name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <htp/capability.hpp>

#include "diag/diagnostic.hpp"
#include "registry/component.hpp"
#include "registry/registry.hpp"

namespace htp {

using FactId = uint32_t;
using ComponentIndex = uint32_t;

/// One component with its capability lists parsed.
struct IndexedComponent {
  const Component *component = nullptr;
  std::vector<Capability> provides;    ///< Facts.
  std::vector<Capability> requires_;   ///< Requirements ('?' = optional; ranges allowed).
  std::vector<Capability> conflicts;   ///< Patterns.
  std::vector<Capability> accepts;     ///< Patterns over obligations.
  std::vector<Capability> applies_to;  ///< Patterns (passes).
  std::vector<Capability> invalidates; ///< Patterns (passes).
  std::vector<FactId> provided;        ///< Interned `provides`, ascending, unique.
  bool malformed = false;              ///< Some capability text did not parse; never selected.
};

/// A pattern of one component: `entry` indexes its applies_to or conflicts list.
struct PatternRef {
  ComponentIndex component = 0;
  uint32_t entry = 0;
};

class CapabilityIndex {
public:
  /// Parses and indexes every component of `registry`; malformed text becomes a diagnostic and marks
  /// the component unusable. Components are numbered in ascending id order, independent of registration.
  explicit CapabilityIndex(const Registry &registry);

  /// Components in ascending id order.
  const std::vector<IndexedComponent> &components() const { return components_; }
  const IndexedComponent &at(ComponentIndex c) const { return components_[c]; }
  /// The index of the component with this id.
  std::optional<ComponentIndex> find(std::string_view id) const;

  /// Number of interned facts (every distinct provided capability).
  FactId fact_count() const { return static_cast<FactId>(facts_.size()); }
  const Capability &fact(FactId f) const { return facts_[f]; }
  const std::string &fact_text(FactId f) const { return fact_texts_[f]; }
  /// Components providing fact f, ascending.
  const std::vector<ComponentIndex> &providers(FactId f) const { return providers_[f]; }
  /// Facts that `pattern` matches, ascending.
  std::vector<FactId> matching_facts(const Capability &pattern) const;
  /// Facts with this Namespace.Name, ascending (near-match explanations).
  const std::vector<FactId> &facts_named(const std::string &qualified_name) const;

  /// All applies-to patterns of passes; appliers_of(f) lists those matching fact f (ids into this list).
  const std::vector<PatternRef> &applies_patterns() const { return applies_; }
  const std::vector<uint32_t> &appliers_of(FactId f) const { return appliers_of_[f]; }
  /// Applies-to pattern ids with this Namespace.Name (for facts known only at resolution time).
  const std::vector<uint32_t> &appliers_named(const std::string &qualified_name) const;
  /// Number of non-optional applies-to patterns of each component (0 = never selected by applies-to).
  uint32_t required_applies(ComponentIndex c) const { return applies_needed_[c]; }

  /// All conflict patterns; conflicters_of(f) lists those matching fact f.
  const std::vector<PatternRef> &conflict_patterns() const { return conflicts_; }
  const std::vector<uint32_t> &conflicters_of(FactId f) const { return conflicters_of_[f]; }
  const std::vector<uint32_t> &conflicters_named(const std::string &qualified_name) const;

  /// Accept patterns with this Namespace.Name as (component, index into accepts).
  const std::vector<PatternRef> &acceptors_named(const std::string &qualified_name) const;

  /// Components of one kind, ascending id.
  const std::vector<ComponentIndex> &of_kind(ComponentKind kind) const {
    return by_kind_[static_cast<size_t>(kind)];
  }
  /// Components of `kind` whose targets list `target`, ascending id.
  std::vector<ComponentIndex> claiming(ComponentKind kind, std::string_view target) const;
  /// Every target named by a backend, binding or pipeline, sorted.
  std::vector<std::string> targets() const;

  /// Diagnostics for malformed capability text found while indexing.
  const DiagnosticList &diagnostics() const { return diagnostics_; }

private:
  FactId intern(const Capability &fact);

  std::vector<IndexedComponent> components_;
  std::unordered_map<std::string, ComponentIndex> by_id_;
  std::vector<Capability> facts_;
  std::vector<std::string> fact_texts_;
  std::unordered_map<std::string, FactId> fact_by_text_;
  std::vector<std::vector<ComponentIndex>> providers_;
  std::unordered_map<std::string, std::vector<FactId>> facts_by_name_;
  std::unordered_map<std::string, std::vector<FactId>> facts_by_param_;
  std::vector<PatternRef> applies_;
  std::vector<std::vector<uint32_t>> appliers_of_;
  std::unordered_map<std::string, std::vector<uint32_t>> appliers_by_name_;
  std::vector<uint32_t> applies_needed_;
  std::vector<PatternRef> conflicts_;
  std::vector<std::vector<uint32_t>> conflicters_of_;
  std::unordered_map<std::string, std::vector<uint32_t>> conflicters_by_name_;
  std::unordered_map<std::string, std::vector<PatternRef>> acceptors_by_name_;
  std::vector<std::vector<ComponentIndex>> by_kind_;
  DiagnosticList diagnostics_;
};

/// The key of a text parameter in the fact index: Namespace.Name, key and value.
std::string fact_param_key(const std::string &qualified_name, const std::string &key,
                           const std::string &text);

} // namespace htp
