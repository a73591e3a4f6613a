#include "resolver/capability_diagnostic.hpp"

namespace htp {

Diagnostic capability_diagnostic(const CapabilityError &error, std::string_view text, std::string_view where,
                                 Span span) {
  std::string message = "malformed capability '" + std::string(text) + "'";
  if (!where.empty()) message += " in " + std::string(where);
  message += " at column " + std::to_string(error.column) + ": " + error.reason;
  if (span.known()) {
    span.col += static_cast<uint32_t>(error.column);
    span.end_line = span.line;
    span.end_col = span.col + 1;
  }
  return Diagnostic::error("capability.syntax", std::move(message), std::move(span));
}

Expected<Capability> parse_capability_or_diagnostic(std::string_view text, CapabilityMode mode,
                                                    std::string_view where, Span span) {
  auto parsed = parse_capability(text, mode);
  if (!parsed) return capability_diagnostic(parsed.error(), text, where, std::move(span));
  return parsed.value();
}

} // namespace htp
