#include "program.hpp"

#include <map>

namespace wsp {

void report(htp::PassContext &ctx, const WspError &e) {
  ctx.error(e.at(), e.code(), e.what());
}

namespace {

std::string string_attr(htp::NodeRef n, std::string_view key) {
  auto text = n.attr(key);
  if (!text) return {};
  json v = json::parse(*text, nullptr, false);
  return v.is_string() ? v.get<std::string>() : std::string();
}

std::vector<htp::NodeRef> captured(const htp::ModuleRef &m, std::string_view decorator) {
  std::vector<htp::NodeRef> out;
  for (auto stmt : m.root().items("body"))
    if (is_captured(stmt, "wsp", decorator)) out.push_back(stmt);
  return out;
}

} // namespace

std::string dialect_of(htp::NodeRef fn) {
  return string_attr(fn, "htp.dialect");
}
std::string decorator_of(htp::NodeRef fn) {
  return string_attr(fn, "htp.decorator");
}

bool is_captured(htp::NodeRef fn, std::string_view dialect, std::string_view decorator) {
  return fn.is("FunctionDef") && dialect_of(fn) == dialect && decorator_of(fn) == decorator;
}

std::vector<htp::NodeRef> workloads(const htp::ModuleRef &m) {
  return captured(m, "workload");
}
std::vector<htp::NodeRef> schedules(const htp::ModuleRef &m) {
  return captured(m, "schedule");
}

htp::NodeRef function_named(const htp::ModuleRef &m, std::string_view name) {
  for (auto stmt : m.root().items("body"))
    if (stmt.is("FunctionDef") && stmt.text("name") == name) return stmt;
  return {};
}

htp::NodeRef schedule_decorator(htp::NodeRef fn) {
  for (auto d : fn.items("decorator_list"))
    if (d.is("Call") && last_name(d.child("func").dotted_name()) == "schedule") return d;
  return {};
}

json span_json(htp::NodeRef n) {
  HtpSpan s = n.span();
  return json{{"line", s.line}, {"col", s.col}, {"end_line", s.end_line}, {"end_col", s.end_col}};
}

json captured_constants(const htp::ModuleRef &m) { return m.capture_table<json>("constants"); }

std::string last_name(const std::string &dotted) {
  auto dot = dotted.rfind('.');
  return dot == std::string::npos ? dotted : dotted.substr(dot + 1);
}

bool is_docstring(htp::NodeRef stmt) {
  if (!stmt.is("Expr") || !stmt.child("value").is("Constant")) return false;
  auto c = stmt.child("value").constant();
  return c && c->kind == HTP_CONST_STR;
}

std::string surface_name(htp::NodeRef callee) {
  std::string dotted = callee.dotted_name();
  if (dotted.empty()) return {};
  std::string last = last_name(dotted);
  std::string head = dotted.size() > last.size() ? dotted.substr(0, dotted.size() - last.size() - 1) : "";
  return last_name(head) == "P" ? "P." + last : last;
}

std::string describe(htp::NodeRef n) {
  if (!n) return "nothing";
  if (auto d = n.dotted_name(); !d.empty()) return "'" + d + "'";
  if (n.is("Call")) {
    auto callee = n.child("func").dotted_name();
    return callee.empty() ? "a call" : "a call of '" + callee + "'";
  }
  if (auto c = n.is("Constant") ? n.constant() : std::nullopt) {  // with its value: "the constant 0"
    switch (c->kind) {
      case HTP_CONST_INT: return "the constant " + std::to_string(c->i);
      case HTP_CONST_STR: return "the string '" + htp::from_htp_str(c->text) + "'";
      case HTP_CONST_BOOL: return c->i ? "the constant True" : "the constant False";
      case HTP_CONST_NONE: return "None";
      default: break;
    }
  }
  static const std::map<std::string_view, const char *> kinds = {{"Constant", "a constant"},
                                                                 {"Subscript", "a subscript"},
                                                                 {"Assign", "an assignment"},
                                                                 {"AugAssign", "an assignment"},
                                                                 {"For", "a for loop"},
                                                                 {"If", "an if statement"},
                                                                 {"With", "a with block"},
                                                                 {"Lambda", "a lambda"},
                                                                 {"Starred", "a starred expression"},
                                                                 {"UnaryOp", "a unary expression"},
                                                                 {"BinOp", "an arithmetic expression"}};
  if (auto it = kinds.find(n.type()); it != kinds.end()) return it->second;
  return "a " + std::string(n.type()) + " expression";
}

std::string channel_kind(htp::NodeRef value) {
  if (!value || !value.is("Call")) return "";
  htp::NodeRef f = value.child("func");
  if (f.is("Subscript") && surface_name(f.child("value")) == "Channel") return "fifo";
  return surface_name(f) == "Event" ? "event" : "";
}

} // namespace wsp
