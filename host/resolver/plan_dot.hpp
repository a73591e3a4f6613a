// Graphviz (DOT) rendering of a plan: the chosen components, the capabilities they provide and
// require, the obligations and who accepts them, the pass order and the alternatives not chosen.
#pragma once

#include <string>

#include "resolver/plan.hpp"

namespace htp {

/// A `digraph` in DOT syntax; deterministic for a given plan.
std::string plan_to_dot(const Plan &plan);

} // namespace htp
