// Explanations of resolution failures: what is missing, who needed it, what nearly matches and what
// would supply it.
#pragma once

#include <string>
#include <vector>

#include "diag/diagnostic.hpp"
#include "resolver/obligation.hpp"
#include "resolver/selection.hpp"
#include "resolver/unloaded_catalog.hpp"

namespace htp {

/// Loaded components providing a fact with the pattern's Namespace.Name that the pattern does not
/// match, each naming the key that differs (at most `limit`, then a count of the rest).
std::vector<std::string> near_matches(const Selection &selection, const Capability &pattern,
                                      size_t limit = 5);

/// The `resolve.unmet` error for a need nothing can satisfy: the requirement or obligation, the
/// component or source span that needed it, rejected and failed candidates with their reasons, near
/// matches and known-but-unloaded providers.
Diagnostic explain_unmet(const Selection &selection, uint32_t need,
                         const std::vector<Obligation> &obligations, const std::vector<Alternative> &rejected,
                         const std::vector<Alternative> &failed, const UnloadedCatalog &unloaded);

/// The `resolve.unaccepted` error at the obligation's span: no chosen component accepts it, and which
/// loaded or known components would, for which targets.
Diagnostic explain_unaccepted(const Selection &selection, const Obligation &obligation,
                              const std::string &target, const UnloadedCatalog &unloaded);

} // namespace htp
