#include "diag/diagnostic_json.hpp"

namespace htp {

nlohmann::json diagnostic_to_json(const Diagnostic &d) {
  nlohmann::json j = {{"severity", severity_name(d.severity)}, {"message", d.message}};
  if (!d.code.empty()) j["code"] = d.code;
  if (!d.span.file.empty() || d.span.known())
    j["span"] = {{"file", d.span.file},          {"line", d.span.line},         {"col", d.span.col},
                 {"end_line", d.span.end_line}, {"end_col", d.span.end_col}};
  if (!d.notes.empty()) {
    j["notes"] = nlohmann::json::array();
    for (const auto &n : d.notes) j["notes"].push_back(diagnostic_to_json(n));
  }
  j["rendered"] = d.render();
  return j;
}

Diagnostic diagnostic_from_json(const nlohmann::json &j) {
  Diagnostic d;
  if (!j.is_object()) return Diagnostic::error("json.diagnostic", "malformed diagnostic");
  std::string sev = j.value("severity", "error");
  d.severity = sev == "note" ? Severity::Note : sev == "warning" ? Severity::Warning : Severity::Error;
  d.code = j.value("code", "");
  d.message = j.value("message", "");
  if (auto it = j.find("span"); it != j.end() && it->is_object()) {
    d.span.file = it->value("file", "");
    d.span.line = it->value("line", 0u);
    d.span.col = it->value("col", 0u);
    d.span.end_line = it->value("end_line", 0u);
    d.span.end_col = it->value("end_col", 0u);
  }
  if (auto it = j.find("notes"); it != j.end() && it->is_array())
    for (const auto &n : *it) d.notes.push_back(diagnostic_from_json(n));
  return d;
}

nlohmann::json diagnostics_to_json(const DiagnosticList &list) {
  nlohmann::json a = nlohmann::json::array();
  for (const auto &d : list.items()) a.push_back(diagnostic_to_json(d));
  return a;
}

}  // namespace htp
