#include "csp_common.hpp"

namespace csp {

std::string surface_name(htp::NodeRef callee) {
  if (callee.is("Name")) return callee.text("id").value_or("");
  if (callee.is("Attribute")) return callee.text("attr").value_or("");
  return {};
}

bool is_call_of(htp::NodeRef call, std::string_view name) {
  return call.is("Call") && surface_name(call.child("func")) == name;
}

Json span_json(htp::NodeRef n) {
  HtpSpan s = n.span();
  return Json{{"file", htp::from_htp_str(s.file)},
              {"line", s.line},
              {"col", s.col},
              {"end_line", s.end_line},
              {"end_col", s.end_col}};
}

htp::SourceSpan source_span(const Json &span) {
  htp::SourceSpan s;
  if (!span.is_object()) return s;
  s.file = span.value("file", "");
  s.line = span.value("line", 0u);
  s.col = span.value("col", 0u);
  s.end_line = span.value("end_line", 0u);
  s.end_col = span.value("end_col", 0u);
  return s;
}

std::optional<Json> node_json(htp::NodeRef n, std::string_view key) {
  auto text = n.attr(key);
  if (!text) return std::nullopt;
  Json j = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

std::optional<Json> module_json(const htp::ModuleRef &m, std::string_view key) { return m.attr_json<Json>(key); }

Json captured_constants(const htp::ModuleRef &m) { return m.capture_table<Json>("constants"); }

void report_at(htp::PassContext &ctx, HtpSeverity severity, const Json &span, std::string_view code,
               std::string_view message) {
  htp::Host(ctx.api()).report(ctx.diag(), severity, code, message, source_span(span));
}

std::string type_text(const Json &type) {
  if (!type.is_object()) return "None";
  std::string kind = type.value("kind", "");
  if (kind == "tile" || kind == "tensor") {
    std::string out = kind == "tile" ? "Tile[" : "Tensor[";
    for (const auto &d : type["shape"])
      out += (d.is_string() ? d.get<std::string>() : d.dump()) + ", ";
    return out + type.value("dtype", "?") + "]";
  }
  if (kind == "scalar") return type.value("dtype", "?");
  return type.dump();
}

htp::NodeRef find_function(const htp::ModuleRef &m, std::string_view name) {
  for (auto stmt : m.root().items("body"))
    if (stmt.is("FunctionDef") && stmt.text("name") == std::string(name)) return stmt;
  return {};
}

} // namespace csp
