// A program obligation: a `Uses.*` capability the program raises, with the source span that raised it.
#pragma once

#include <string>
#include <string_view>

#include <htp/capability.hpp>

#include "diag/diagnostic.hpp"

namespace htp {

struct Obligation {
  Capability capability; ///< A fact, e.g. Uses.Intrinsic(op=add,set=pto).
  Span span;             ///< Where the program raised it; unknown for --uses on the command line.
  std::string label;     ///< What the user wrote, e.g. "pto.add"; empty means the capability text.

  /// The label, or the capability's canonical text when there is no label.
  std::string display() const;
};

/// Parses obligation text (a fact: no '?' and no ranges), or a diagnostic with the column of the error.
Expected<Obligation> parse_obligation(std::string_view text, Span span = {}, std::string label = {});

} // namespace htp
