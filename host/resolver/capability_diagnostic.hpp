// Turns the SDK's CapabilityError (column + reason) into a host Diagnostic.
#pragma once

#include <string>
#include <string_view>

#include <htp/capability.hpp>

#include "diag/diagnostic.hpp"

namespace htp {

/// A `capability.syntax` error quoting `text`, naming `where` it came from (e.g. "requires of pass 'x'")
/// and the 0-based column; when `span` is known the column is added to span.col so it points into the source.
Diagnostic capability_diagnostic(const CapabilityError &error, std::string_view text, std::string_view where,
                                 Span span = {});

/// Parses `text` in `mode`, or returns the capability_diagnostic explaining why it is malformed.
Expected<Capability> parse_capability_or_diagnostic(std::string_view text, CapabilityMode mode,
                                                    std::string_view where, Span span = {});

} // namespace htp
