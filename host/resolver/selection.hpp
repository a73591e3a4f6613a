// The resolver's working state: which components are chosen, which facts hold, which requirements are
// still open, and why each component was chosen. Every change is recorded on a trail so the search can
// backtrack to a mark.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "diag/diagnostic.hpp"
#include "resolver/capability_index.hpp"

namespace htp {

/// Why a component entered the selection.
enum class ChoiceRule {
  TargetBackend,    ///< The backend for the target (priority or user pick).
  TargetBinding,    ///< The binding for the target (priority or user pick).
  TargetPipeline,   ///< The pipeline template for the target.
  PipelineTemplate, ///< A pass the pipeline template lists.
  ExplicitPassList, ///< A pass of the user's explicit pass list.
  AppliesTo,        ///< A pass whose applies_to patterns all hold.
  Requirement,      ///< A provider chosen to satisfy a requirement.
  Obligation,       ///< A dialect, intrinsic set or layout a program obligation needs.
};

/// "target-backend", "applies-to", ... (the plan's `rule` field).
const char *choice_rule_name(ChoiceRule rule);

/// A component that could have been chosen instead, with the verdict on it.
struct Alternative {
  ComponentIndex component = 0;
  std::string verdict;
};

/// One decision.
struct Choice {
  ComponentIndex component = 0;
  ChoiceRule rule = ChoiceRule::Requirement;
  int32_t need = -1;   ///< The need it satisfied (Requirement, Obligation), else -1.
  std::string because; ///< Extra reason text (priority comparison, user pick, pipeline name).
  std::vector<Alternative> alternatives;
};

/// Something the selection must contain: a provider of a requirement of a chosen component, or a
/// component an obligation needs (a dialect by name, an intrinsic set by set/op, a layout by kind/facet).
/// Its fact and component lists live in the selection (Selection::need_facts, need_pool): a need holds
/// no memory of its own, so that tens of thousands of them cost no allocation each.
struct Need {
  enum class Kind { Requirement, ObligationComponent };
  Kind kind = Kind::Requirement;
  ComponentIndex owner = 0; ///< Requirement: the component that requires.
  uint32_t entry = 0;       ///< Requirement: index into owner's requires_; Obligation: obligation index.
  ComponentKind needed_kind = ComponentKind::Dialect; ///< Obligation: the kind needed.
  bool self_provided = false; ///< Requirement: the owner itself provides one of the matching facts.
  uint32_t matches_at = 0, matches_size = 0; ///< Requirement: facts that satisfy it.
  uint32_t pool_at = 0, pool_size = 0;       ///< Components that could satisfy it.
  std::string what;                          ///< Obligation: what is needed, e.g. "dialect 'wsp'".
};

/// A failed addition: the diagnostic, and the component whose compatibility check failed.
struct AddFailure {
  Diagnostic diagnostic;
  ComponentIndex culprit = 0;
};

/// A fact that holds for this resolution without a provider: an obligation or the target.
struct LocalFact {
  Capability capability;
  std::string source; ///< "the program", "the target".
};

class Selection {
public:
  /// Starts with the local facts holding; `auto_apply` selects passes whose applies_to holds.
  Selection(const CapabilityIndex &index, std::vector<LocalFact> local_facts, bool auto_apply);

  /// The parsed registry.
  const CapabilityIndex &index() const { return index_; }

  // ---- Facts: index facts first, then local facts.
  /// Number of facts: index facts, then local facts.
  FactId fact_total() const { return static_cast<FactId>(count_.size()); }
  /// Fact f (index or local).
  const Capability &fact(FactId f) const;
  /// Canonical text of fact f.
  std::string_view fact_text(FactId f) const;
  /// True for an obligation or the target fact.
  bool is_local(FactId f) const { return f >= index_.fact_count(); }
  /// Facts (index and local) that `pattern` matches, ascending.
  std::vector<FactId> matching(const Capability &pattern) const;
  /// Appends the facts that requirement `entry` of component c matches (precomputed index part plus
  /// local facts) to `out`.
  void append_requirement_matches(ComponentIndex c, uint32_t entry, std::vector<FactId> &out) const;
  /// Facts that applies-to pattern `entry` of component c matches.
  std::vector<FactId> applies_to_matches(ComponentIndex c, uint32_t entry) const;
  /// Facts that invalidates pattern `entry` of component c matches.
  std::vector<FactId> invalidation_matches(ComponentIndex c, uint32_t entry) const;
  /// How many chosen components (or local sources) make f hold.
  uint32_t count(FactId f) const { return count_[f]; }
  /// Who makes f hold: "pass 'x'", "the program", ...; empty when f does not hold.
  std::string source_of(FactId f) const;
  /// The first chosen provider of f, if a component provides it.
  std::optional<ComponentIndex> chosen_provider(FactId f) const;

  // ---- Components.
  /// True when c is in the selection.
  bool chosen(ComponentIndex c) const { return chosen_[c] != 0; }
  /// True when c failed to join and is never auto-selected again.
  bool banned(ComponentIndex c) const { return banned_[c] != 0; }
  /// Chosen components in the order they were chosen.
  const std::vector<ComponentIndex> &chosen_in_order() const { return order_; }
  /// The decision behind each chosen component, parallel to chosen_in_order().
  const std::vector<Choice> &choices() const { return choices_; }
  /// True unless an explicit pass list is in force.
  bool auto_apply() const { return auto_apply_; }

  /// Why c cannot join the current selection (a conflict either way, or a second name in an exclusive
  /// namespace), or nullopt when it can.
  std::optional<Diagnostic> incompatibility(ComponentIndex c) const;
  /// Adds a component and then every pass whose applies_to now holds. All or nothing: on failure the
  /// selection is as before the call.
  std::optional<AddFailure> add(Choice choice);
  /// Adds every pass whose applies_to holds but is not chosen yet; stops at the first that cannot join
  /// (what was added before it stays).
  std::optional<AddFailure> settle();
  /// Never auto-select c again (after its failure has been reported).
  void ban(ComponentIndex c) { banned_[c] = 1; }

  // ---- Needs.
  /// Every need created so far (ids are indices).
  const std::vector<Need> &needs() const { return needs_; }
  /// The facts that satisfy a requirement need (none for an obligation need).
  std::span<const FactId> need_facts(const Need &n) const {
    return {need_lists_.data() + n.matches_at, n.matches_size};
  }
  /// The components that could satisfy a need, ascending.
  std::span<const ComponentIndex> need_pool(const Need &n) const {
    return {need_lists_.data() + n.pool_at, n.pool_size};
  }
  /// Adds an obligation need; returns its id.
  uint32_t add_obligation_need(uint32_t obligation, std::string what, ComponentKind kind,
                               std::vector<ComponentIndex> pool);
  /// True when the need holds now (a matching fact from another component or a local source).
  bool satisfied(uint32_t need) const;
  /// Candidates not chosen that could satisfy the need and can join now; with `rejected`, also those
  /// that cannot, with the reason.
  std::vector<ComponentIndex> viable(uint32_t need, std::vector<Alternative> *rejected) const;
  /// Whether a component of this kind may be chosen to satisfy a requirement (and why not).
  std::optional<std::string> not_selectable(ComponentIndex c) const;

  // ---- Trail.
  /// A point on the trail to undo() back to.
  size_t mark() const { return trail_.size(); }
  /// Restores the selection to a mark.
  void undo(size_t mark);

private:
  void add_one(Choice choice);
  void increment(FactId f);
  /// True when fact f is in an exclusive namespace.
  bool exclusive(FactId f) const {
    return is_local(f) ? local_exclusive_[f - index_.fact_count()] != 0 : index_.exclusive(f);
  }
  void decrement(FactId f);
  std::span<const uint32_t> appliers(FactId f) const;
  std::span<const uint32_t> conflicters(FactId f) const;
  void append_local_matches(const Capability &pattern, std::vector<FactId> &out) const;

  struct TrailEntry {
    ComponentIndex component;
    size_t needs_before;
    size_t need_lists_before;
  };

  const CapabilityIndex &index_;
  std::vector<LocalFact> local_;
  std::vector<std::string> local_text_;
  std::vector<char> local_exclusive_; ///< Per local fact: is_exclusive_namespace(ns).
  /// Locals by Namespace.Name: a handful of names (Uses.Dialect, Target.Selected, ...), compared as text,
  /// which is cheaper than hashing every requirement's name.
  struct LocalName {
    std::vector<uint32_t> locals; ///< The first one's capability gives the name.
  };
  std::vector<LocalName> local_by_name_;
  std::unordered_map<CapabilityKey, std::vector<uint32_t>> local_by_param_; ///< param_key -> locals.
  std::vector<std::vector<uint32_t>> local_appliers_;
  std::vector<std::vector<uint32_t>> local_conflicters_;
  bool auto_apply_;

  std::vector<uint32_t> count_;
  std::vector<uint32_t> pattern_present_; ///< Per applies-to pattern: matching facts that hold.
  std::vector<uint32_t> unmet_applies_;   ///< Per component: applies-to patterns not holding.
  std::vector<ComponentIndex> pending_;   ///< Min-heap of passes whose applies_to holds.
  std::vector<char> chosen_;
  std::vector<char> banned_;
  std::vector<ComponentIndex> order_;
  std::vector<Choice> choices_;
  std::vector<Need> needs_;
  std::vector<uint32_t> need_lists_; ///< Every need's matches and pool, in creation order.
  std::vector<TrailEntry> trail_;
  std::vector<std::pair<std::string, uint32_t>> exclusive_; ///< Qualified names in exclusive namespaces.
};

/// "pass 'wsp.lower' (plugin 'dialect-wsp' 1.0.0)".
std::string describe_component(const Component &c);

} // namespace htp
