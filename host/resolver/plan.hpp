// The resolver's result: the chosen components, the ordered passes, the facts after each pass and the
// derivation of every choice, serialised as the deterministic `htp.plan.v1` JSON document.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "diag/diagnostic.hpp"
#include "diag/diagnostic_json.hpp"
#include "registry/component.hpp"
#include "resolver/obligation.hpp"

namespace htp {

/// A component that could have been chosen, with the verdict on it.
struct PlanAlternative {
  std::string id;
  std::string kind;
  std::string verdict;
};

/// Why one component is in the plan.
struct Derivation {
  std::string component;   ///< Chosen component id.
  std::string kind;        ///< Its kind name.
  std::string rule;        ///< target-backend, target-binding, target-pipeline, pipeline-template,
                           ///< explicit-pass-list, applies-to, requirement, obligation.
  std::string because;     ///< One sentence.
  std::string requirement; ///< The capability that forced it, when one did.
  std::string required_by; ///< The component id, obligation or target that needed it.
  Span span;               ///< The obligation's span when the program forced it.
  std::vector<PlanAlternative> alternatives;
};

/// An ordering constraint that placed a pass after another.
struct PassPredecessor {
  std::string id;
  std::string reason;
};

/// One pass in run order, with the facts it adds and removes.
struct PlannedPass {
  const Component *component = nullptr;
  std::vector<std::string> added;     ///< Facts it makes hold, sorted.
  std::vector<std::string> removed;   ///< Facts it invalidates, sorted.
  std::vector<PassPredecessor> after; ///< Passes it must follow and why, sorted by id.
};

/// An obligation and the chosen components that accept it.
struct PlannedObligation {
  Obligation obligation;
  std::vector<std::string> accepted_by; ///< Component ids, sorted.
};

/// A resolved plan. Component pointers refer into the Registry it was resolved from.
struct Plan {
  std::string target;
  std::vector<PlannedObligation> obligations;
  const Component *backend = nullptr;
  const Component *binding = nullptr;
  const Component *pipeline = nullptr;       ///< nullptr without a pipeline template.
  std::vector<const Component *> components; ///< Every chosen component, by kind then id.
  std::vector<std::string> initial_facts;    ///< Facts before the first pass, sorted.
  std::vector<PlannedPass> passes;           ///< Run order.
  std::vector<Derivation> derivation;        ///< In decision order.
  std::vector<std::string> notes;            ///< Unmet optional requirements and the like.

  /// The facts that hold after pass `index` runs, sorted.
  std::vector<std::string> facts_after(size_t index) const;
  /// The plugins of the chosen components, unique by name, sorted by name.
  std::vector<PluginRef> plugins() const;
  /// The `htp.plan.v1` document as a tree: to_json_text() parsed, members in document order.
  nlohmann::ordered_json to_json() const;
  /// The `htp.plan.v1` document with two-space indentation and a final newline, laid out as
  /// nlohmann::json::dump(2) lays it out and written directly (no tree); same inputs in any registration
  /// order give the same bytes. Invalid UTF-8 in any text throws nlohmann::json::type_error as dump() does.
  std::string to_json_text() const;
  /// The same text written to `out` in chunks of about 1 MB, without holding the whole document (on
  /// invalid UTF-8 it throws after writing the chunks before it).
  void write_json(std::ostream &out) const;
  /// The derivation as readable text for `resolve --explain`.
  std::string explain() const;
};

/// The schema tag of plan documents.
inline constexpr const char *kPlanSchema = "htp.plan.v1";

} // namespace htp
