// JSON form of diagnostics (for traces, child-process reports and --json output).
#pragma once

#include <nlohmann/json.hpp>

#include "diag/diagnostic.hpp"

namespace htp {

/// A span as JSON: {"file","line","col","end_line","end_col"}, or null when it has neither file nor line.
nlohmann::ordered_json span_to_json(const Span &span);

nlohmann::ordered_json diagnostic_to_json(const Diagnostic &d);
/// Inverse of diagnostic_to_json; tolerant (missing fields read as empty).
Diagnostic diagnostic_from_json(const nlohmann::json &j);
Diagnostic diagnostic_from_json(const nlohmann::ordered_json &j);
nlohmann::ordered_json diagnostics_to_json(const DiagnosticList &list);

}  // namespace htp
