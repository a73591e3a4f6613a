// Turns the chosen passes into a run order: ordering constraints from stages, requires/provides,
// invalidates and explicit before/after; then replays the facts to check every requirement holds when
// its pass runs.
#pragma once

#include <optional>
#include <vector>

#include "diag/diagnostic.hpp"
#include "resolver/plan.hpp"
#include "resolver/selection.hpp"

namespace htp {

/// Passes in run order with the facts before the first one.
struct PassSchedule {
  std::vector<std::string> initial_facts; ///< Sorted.
  std::vector<PlannedPass> passes;
};

/// Orders the selection's passes (or checks `explicit_order`, the user's pass list) and replays their
/// facts; cycles, stage inversions and requirements not holding when a pass runs are reported to
/// `diagnostics`.
PassSchedule schedule_passes(const Selection &selection,
                             const std::optional<std::vector<ComponentIndex>> &explicit_order,
                             DiagnosticList &diagnostics);

} // namespace htp
