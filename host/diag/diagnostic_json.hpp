// JSON form of diagnostics (for traces, child-process reports and --json output).
#pragma once

#include <nlohmann/json.hpp>

#include "diag/diagnostic.hpp"

namespace htp {

nlohmann::json diagnostic_to_json(const Diagnostic &d);
/// Inverse of diagnostic_to_json; tolerant (missing fields read as empty).
Diagnostic diagnostic_from_json(const nlohmann::json &j);
nlohmann::json diagnostics_to_json(const DiagnosticList &list);

}  // namespace htp
