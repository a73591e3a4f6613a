#include "diag/diagnostic_json.hpp"

namespace htp {

nlohmann::ordered_json span_to_json(const Span &span) {
  if (!span.known() && span.file.empty()) return nullptr;
  nlohmann::ordered_json j;
  j["file"] = span.file;
  j["line"] = span.line;
  j["col"] = span.col;
  j["end_line"] = span.end_line;
  j["end_col"] = span.end_col;
  return j;
}

nlohmann::ordered_json diagnostic_to_json(const Diagnostic &d) {
  nlohmann::ordered_json j = {{"severity", severity_name(d.severity)}, {"message", d.message}};
  if (!d.code.empty()) j["code"] = d.code;
  if (!d.span.file.empty() || d.span.known()) j["span"] = span_to_json(d.span);
  if (!d.notes.empty()) {
    j["notes"] = nlohmann::ordered_json::array();
    for (const auto &n : d.notes) j["notes"].push_back(diagnostic_to_json(n));
  }
  j["rendered"] = d.render();
  return j;
}

template <class Json> Diagnostic diagnostic_from(const Json &j) {
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
    for (const auto &n : *it) d.notes.push_back(diagnostic_from(n));
  return d;
}

Diagnostic diagnostic_from_json(const nlohmann::json &j) { return diagnostic_from(j); }
Diagnostic diagnostic_from_json(const nlohmann::ordered_json &j) { return diagnostic_from(j); }

nlohmann::ordered_json diagnostics_to_json(const DiagnosticList &list) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const auto &d : list.items()) a.push_back(diagnostic_to_json(d));
  return a;
}

}  // namespace htp
