#include "functions.hpp"

#include "surface.hpp"

namespace tile {

nlohmann::json node_attr_json(htp::NodeRef n, std::string_view key) {
  auto text = n.attr(key);
  if (!text) return nullptr;
  auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  return j.is_discarded() ? nlohmann::json() : j;
}

namespace {

bool decorator_is_kernel(htp::NodeRef d) {
  if (d.is("Call")) d = d.child("func");
  std::string name = d.dotted_name();
  return name == "kernel" || name == "tile.kernel";
}

} // namespace

bool is_tile_kernel(htp::NodeRef fn) {
  if (!fn.is("FunctionDef")) return false;
  auto dialect = node_attr_json(fn, "htp.dialect");
  if (dialect.is_string()) return dialect.get<std::string>() == "tile";
  for (auto d : fn.items("decorator_list"))
    if (decorator_is_kernel(d)) return true;
  return false;
}

std::optional<std::string> tile_lower_kind(htp::NodeRef fn) {
  auto mark = node_attr_json(fn, "tile.lower");
  if (mark.is_null()) return std::nullopt;
  if (mark.is_object() && mark.contains("kind") && mark["kind"].is_string())
    return mark["kind"].get<std::string>();
  return std::string("process");
}

std::optional<TileFunction> tile_function(htp::NodeRef stmt) {
  if (!stmt.is("FunctionDef") || !stmt.parent().is("Module")) return std::nullopt;
  if (is_tile_kernel(stmt)) return TileFunction{stmt, "kernel"};
  if (auto kind = tile_lower_kind(stmt)) return TileFunction{stmt, *kind};
  return std::nullopt;
}

std::vector<TileFunction> tile_functions(htp::NodeRef root) {
  std::vector<TileFunction> out;
  for (auto stmt : root.items("body"))
    if (auto f = tile_function(stmt)) out.push_back(std::move(*f));
  return out;
}

std::set<std::string> bound_names(htp::NodeRef fn) {
  std::set<std::string> bound;
  auto args = fn.child("args");
  for (const char *field : {"posonlyargs", "args", "kwonlyargs"})
    for (auto a : args.items(field))
      bound.insert(a.text("arg").value_or(""));
  for (const char *field : {"vararg", "kwarg"})
    if (auto a = args.child(field)) bound.insert(a.text("arg").value_or(""));
  for (auto stmt : fn.items("body"))
    stmt.walk([&](htp::NodeRef n) {
      if (n.is("Name") && !n.child("ctx").is("Load")) bound.insert(n.text("id").value_or(""));
      if (n.is("FunctionDef") || n.is("ClassDef") || n.is("AsyncFunctionDef"))
        bound.insert(n.text("name").value_or(""));
    });
  return bound;
}

namespace {

std::vector<std::string> split_dotted(const std::string &dotted) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t dot; (dot = dotted.find('.', start)) != std::string::npos; start = dot + 1)
    out.push_back(dotted.substr(start, dot - start));
  out.push_back(dotted.substr(start));
  return out;
}

/// The set a module path names: `tile` / `htp.dialects.tile` (portable), `htp.intrinsics.S` or
/// `intrinsics.S`, and in kernels a lone free name `S`; "" when the path names no intrinsic set.
std::string set_of_module(const std::vector<std::string> &path, CallRules rules) {
  const std::string &last = path.back();
  if (last == "tile") return "tile";
  if (path.size() >= 2 && path[path.size() - 2] == "intrinsics") return last;
  if (path.size() == 1 && rules.bare_set_modules) return last;
  return "";
}

/// The set a module path names when its first name's module is known (`resolved` starts with that module's
/// dotted name); "" for a module that is no intrinsic set.
std::string set_of_bound_module(const std::vector<std::string> &resolved, CallRules rules) {
  if (resolved.size() != 3 || resolved[0] != "htp") return "";
  if (resolved[1] == "intrinsics") return resolved[2];
  if (resolved[1] != "dialects") return "";
  if (resolved[2] == "tile") return "tile";
  return rules.bare_set_modules ? resolved[2] : "";
}

} // namespace

std::optional<IntrinsicCall> intrinsic_call(htp::NodeRef call, const std::set<std::string> &bound,
                                            const CapturedGlobals &globals, CallRules rules) {
  if (!call.is("Call")) return std::nullopt;
  auto func = call.child("func");
  if (func.is("Name")) {
    std::string name = func.text("id").value_or("");
    if (bound.count(name) || !find_intrinsic(name)) return std::nullopt;
    if (rules.python_builtins && (name == "abs" || name == "max" || name == "min")) return std::nullopt;
    return IntrinsicCall{"tile", name};
  }
  if (!func.is("Attribute")) return std::nullopt;
  std::string module = func.child("value").dotted_name();
  if (module.empty()) return std::nullopt; // `x[0].f(...)`, `f().g(...)`: not a module path
  auto path = split_dotted(module);
  if (bound.count(path[0]) || globals.constants.contains(path[0])) return std::nullopt;
  std::string set;
  if (auto it = globals.modules.find(path[0]); it != globals.modules.end() && it->is_string()) {
    auto resolved = split_dotted(it->get<std::string>());
    resolved.insert(resolved.end(), path.begin() + 1, path.end());
    set = set_of_bound_module(resolved, rules);
  } else {
    set = set_of_module(path, rules);
  }
  std::string op = func.text("attr").value_or("");
  if (set.empty() || (set == "tile" && !find_intrinsic(op))) return std::nullopt;
  return IntrinsicCall{set, op};
}

CapturedGlobals captured_globals(const htp::ModuleRef &m) {
  return CapturedGlobals{m.capture_table<nlohmann::json>("constants"), m.capture_table<nlohmann::json>("modules")};
}

nlohmann::json captured_constants(const htp::ModuleRef &m) { return captured_globals(m).constants; }

nlohmann::ordered_json span_json(htp::NodeRef n) {
  HtpSpan s = n.span();
  nlohmann::ordered_json j;
  j["file"] = htp::from_htp_str(s.file);
  j["line"] = s.line;
  j["col"] = s.col;
  j["end_line"] = s.end_line;
  j["end_col"] = s.end_col;
  return j;
}

} // namespace tile
