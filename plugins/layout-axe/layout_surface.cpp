#include "layout_surface.hpp"

#include <algorithm>

namespace htp::axe {

// ---- Reporter --------------------------------------------------------------------------------------

void Reporter::error(htp::NodeRef at, const LayoutError &e) {
  std::string key = at.id() + "#" + std::to_string(reinterpret_cast<uintptr_t>(at.handle()));
  if (!seen_.insert({key, e.code}).second) return;
  htp::SourceSpan span = at.source_span();
  std::string message = e.message;
  if (e.column >= 0 && at.is("Constant")) {
    // The column is inside the string literal: skip its opening quote.
    span.col += 1 + static_cast<uint32_t>(e.column);
    span.end_line = span.line;
    span.end_col = span.col + 1;
    message += " (column " + std::to_string(e.column) + " of the layout text)";
  }
  htp::Host(ctx_.api()).error(ctx_.diag(), e.code, message, span);
}

// ---- constants -------------------------------------------------------------------------------------

Constants::Constants(const htp::ModuleRef &m) {
  auto text = m.attr("htp.capture");
  if (!text) return;
  auto doc = nlohmann::json::parse(*text, nullptr, false);
  if (doc.is_object() && doc.contains("constants") && doc["constants"].is_object())
    values_ = doc["constants"];
}

std::optional<nlohmann::json> Constants::eval(htp::NodeRef n) const {
  if (!n) return std::nullopt;
  if (n.is("Constant")) {
    auto c = n.constant();
    if (!c) return std::nullopt;
    switch (c->kind) {
    case HTP_CONST_INT: return nlohmann::json(c->i);
    case HTP_CONST_BOOL: return nlohmann::json(c->i != 0);
    case HTP_CONST_FLOAT: return nlohmann::json(c->real);
    case HTP_CONST_STR: return nlohmann::json(htp::from_htp_str(c->text));
    case HTP_CONST_NONE: return nlohmann::json(nullptr);
    default: return std::nullopt;
    }
  }
  if (n.is("UnaryOp") && n.child("op").is("USub")) {
    auto v = eval(n.child("operand"));
    if (v && v->is_number_integer()) return nlohmann::json(-v->get<int64_t>());
    if (v && v->is_number()) return nlohmann::json(-v->get<double>());
    return std::nullopt;
  }
  if (n.is("List") || n.is("Tuple")) {
    nlohmann::json a = nlohmann::json::array();
    for (auto e : n.items("elts")) {
      auto v = eval(e);
      if (!v) return std::nullopt;
      a.push_back(*v);
    }
    return a;
  }
  if (n.is("Dict")) {
    nlohmann::json o = nlohmann::json::object();
    auto keys = n.items("keys"), values = n.items("values");
    for (size_t i = 0; i < keys.size() && i < values.size(); ++i) {
      auto k = eval(keys[i]);
      auto v = eval(values[i]);
      if (!k || !k->is_string() || !v) return std::nullopt;
      o[k->get<std::string>()] = *v;
    }
    return o;
  }
  if (n.is("Name")) {
    auto id = n.text("id").value_or("");
    if (values_.contains(id)) return values_[id];
  }
  return std::nullopt;
}

std::optional<int64_t> Constants::eval_int(htp::NodeRef n) const {
  auto v = eval(n);
  if (v && v->is_number_integer()) return v->get<int64_t>();
  return std::nullopt;
}

// ---- calls -----------------------------------------------------------------------------------------

namespace {

bool ends_with(const std::string &s, const std::string &tail) {
  return s == tail ||
         (s.size() > tail.size() && s.compare(s.size() - tail.size() - 1, tail.size() + 1, "." + tail) == 0);
}

bool is_axe_form(htp::NodeRef call) {
  return ends_with(call.child("func").dotted_name(), "Layout.axe");
}

constexpr const char *kMemKeywords[] = {"strides", "order", "swizzle", "pack"};

} // namespace

bool is_layout_call(htp::NodeRef n) {
  if (!n.is("Call")) return false;
  std::string callee = n.child("func").dotted_name();
  return ends_with(callee, "Layout") || ends_with(callee, "Layout.axe");
}

bool is_layout_expr(htp::NodeRef n) {
  return is_layout_call(n) || (n && n.attr(kConvertedAttr));
}

std::string callee_name(htp::NodeRef call) {
  if (!call.is("Call")) return {};
  std::string callee = call.child("func").dotted_name();
  auto dot = callee.rfind('.');
  return dot == std::string::npos ? callee : callee.substr(dot + 1);
}

htp::NodeRef keyword(htp::NodeRef call, std::string_view name) {
  for (auto k : call.items("keywords"))
    if (k.text("arg").value_or("") == name) return k.child("value");
  return {};
}

std::set<std::string> layout_facets(htp::NodeRef n) {
  std::set<std::string> facets;
  if (auto converted = n.attr(kConvertedAttr)) {
    auto l = layout_from_json(nlohmann::json::parse(*converted, nullptr, false));
    facets.insert("dist");
    if (l && !l->mem.empty()) facets.insert("mem");
    if (l && l->hw.space) facets.insert("hw");
    return facets;
  }
  if (!is_layout_call(n)) return facets;
  if (n.size("args") > 0 || keyword(n, "shard") || keyword(n, "replica") || keyword(n, "offset"))
    facets.insert("dist");
  for (const char *k : kMemKeywords)
    if (keyword(n, k)) facets.insert("mem");
  if (auto shard = keyword(n, "shard"); shard && (shard.is("List") || shard.is("Tuple")))
    for (auto it : shard.items("elts")) {  // a local iter (axis `m` or a bank) places data in memory
      if (!it.is("Tuple") || it.size("elts") != 3) continue;
      auto axis = it.item("elts", 2);
      auto c = axis.is("Constant") ? axis.constant() : std::nullopt;
      if (!c || c->kind != HTP_CONST_STR) continue;
      const std::string a = htp::from_htp_str(c->text);
      if (a == "m" || (a.size() > 5 && a.substr(a.size() - 5) == ".bank")) facets.insert("mem");
    }
  if (keyword(n, "space")) facets.insert("hw");
  if (facets.empty()) facets.insert("dist"); // Layout(): fully replicated
  return facets;
}

std::optional<Mesh> mesh_of(htp::NodeRef fn, const Constants &c, Reporter &r) {
  for (auto d : fn.items("decorator_list")) {
    if (!d.is("Call")) continue;
    htp::NodeRef mapping = keyword(d, "mapping");
    if (!mapping) continue;
    auto v = c.eval(mapping);
    std::vector<int64_t> extents;
    bool ok = v && v->is_array();
    if (ok)
      for (const auto &e : *v) {
        ok = ok && e.is_number_integer() && e.get<int64_t>() > 0;
        if (ok) extents.push_back(e.get<int64_t>());
      }
    if (!ok) {
      r.error(mapping, "layout.mapping",
              "mapping must be a list of positive integer constants, e.g. mapping=[2, 2]");
      return std::nullopt;
    }
    int64_t points = 1;
    for (int64_t e : extents)
      if (__builtin_mul_overflow(points, e, &points) || points > kMaxMeshPoints) {
        r.error(mapping, "layout.mapping",
                "mapping=" + nlohmann::json(extents).dump() + " has more than " + std::to_string(kMaxMeshPoints) +
                    " points (cores); a kernel's mesh is at most that large");
        return std::nullopt;
      }
    return Mesh::from_mapping(extents);
  }
  return Mesh();
}

// ---- annotations -----------------------------------------------------------------------------------

namespace {

std::optional<TensorInfo> tensor_info(htp::NodeRef type, const Constants &c) {
  if (!type.is("Subscript")) return std::nullopt;
  std::string head = type.child("value").dotted_name();
  if (!ends_with(head, "Tensor") && !ends_with(head, "Tile")) return std::nullopt;
  htp::NodeRef slice = type.child("slice");
  std::vector<htp::NodeRef> elts = slice.is("Tuple") ? slice.items("elts") : std::vector<htp::NodeRef>{slice};
  if (elts.size() < 2) return std::nullopt;
  TensorInfo t;
  for (size_t i = 0; i + 1 < elts.size(); ++i) {
    auto dim = c.eval_int(elts[i]);
    if (!dim) return std::nullopt;
    t.shape.push_back(*dim);
  }
  htp::NodeRef dtype = elts.back();
  if (dtype.is("Name") || dtype.is("Attribute")) {
    t.dtype = dtype.dotted_name();
  } else if (auto v = c.eval(dtype)) {
    t.dtype = v->is_string() ? v->get<std::string>() : v->dump(); // Tensor[.., "f32"] names f32 too
  }
  if (auto dot = t.dtype.rfind('.'); dot != std::string::npos) t.dtype = t.dtype.substr(dot + 1);
  return t;
}

} // namespace

ParamAnnotation read_annotation(htp::NodeRef annotation, const Constants &c) {
  ParamAnnotation a;
  htp::NodeRef n = annotation;
  while (n) {
    if (n.is("BinOp") && n.child("op").is("MatMult")) {
      a.layout_expr = n.child("right");
      n = n.child("left");
      continue;
    }
    std::string head = n.is("Subscript") ? n.child("value").dotted_name() : "";
    if (ends_with(head, "In") || ends_with(head, "Out") || ends_with(head, "InOut")) {
      a.dir = ends_with(head, "InOut") ? "inout" : ends_with(head, "Out") ? "out" : "in";
      n = n.child("slice");
      continue;
    }
    break;
  }
  a.type_node = n;
  a.tensor = tensor_info(n, c);
  return a;
}

// ---- layouts ---------------------------------------------------------------------------------------

namespace {

std::optional<std::vector<UserIter>> user_iters(htp::NodeRef value, const Constants &c, Reporter &r,
                                                const char *what) {
  std::vector<UserIter> out;
  if (!value) return out;
  auto v = c.eval(value);
  bool ok = v && v->is_array();
  if (ok)
    for (const auto &e : *v) {
      ok = ok && e.is_array() && e.size() == 3 && e[0].is_number_integer() && e[1].is_number_integer() &&
           e[2].is_string();
      if (ok) out.push_back({e[0].get<int64_t>(), e[1].get<int64_t>(), e[2].get<std::string>()});
    }
  if (!ok) {
    r.error(value, "layout.syntax",
            std::string(what) +
                " must be a list of (extent, stride, axis) tuples of constants, e.g. [(2, 1, \"mesh.x\")]");
    return std::nullopt;
  }
  return out;
}

std::optional<AxeLayout> read_axe_form(htp::NodeRef call, const TensorInfo &t, const Mesh &mesh,
                                       const Constants &c, Reporter &r) {
  auto shard = user_iters(keyword(call, "shard"), c, r, "shard");
  auto replica = user_iters(keyword(call, "replica"), c, r, "replica");
  if (!shard || !replica) return std::nullopt;
  std::map<std::string, int64_t> offset;
  if (htp::NodeRef o = keyword(call, "offset")) {
    auto v = c.eval(o);
    bool ok = v && v->is_object();
    if (ok)
      for (const auto &[axis, k] : v->items()) {
        ok = ok && k.is_number_integer();
        if (ok) offset[axis] = k.get<int64_t>();
      }
    if (!ok) {
      r.error(o, "layout.syntax", "offset must be a dict {axis: int}, e.g. {\"mesh.y\": 1}");
      return std::nullopt;
    }
  }
  auto l = from_axe_iters(*shard, *replica, offset, t, mesh);
  if (!l) {
    r.error(call, l.error());
    return std::nullopt;
  }
  return *l;
}

std::optional<AxeLayout> read_text_form(htp::NodeRef call, const TensorInfo &t, const Mesh &mesh,
                                        const Constants &c, Reporter &r) {
  DistSpec spec(t.shape.size());
  htp::NodeRef text_node;
  if (call.size("args") > 1) {
    r.error(call, "layout.syntax", "Layout takes one positional argument, the distribution text (\"S(0)R\")");
    return std::nullopt;
  }
  if (call.size("args") == 1) {
    text_node = call.item("args", 0);
    auto text = c.eval(text_node);
    if (!text || !text->is_string()) {
      r.error(text_node, "layout.syntax", "the distribution must be a string constant such as \"S(0)R\"");
      return std::nullopt;
    }
    auto parsed = parse_dist(text->get<std::string>());
    if (!parsed) {
      r.error(text_node, parsed.error());
      return std::nullopt;
    }
    spec = *parsed;
  }
  auto l = from_dist(spec, t, mesh);
  if (!l) {
    r.error(l.error().column >= 0 && text_node ? text_node : call, l.error());
    return std::nullopt;
  }
  return *l;
}

/// Applies the mem and hw keywords of a layout call.
bool apply_facets(htp::NodeRef call, AxeLayout &l, const Constants &c, Reporter &r) {
  static const std::set<std::string> kKnown = {"shard", "replica", "offset", "strides",
                                               "order", "swizzle", "pack",   "space"};
  for (auto k : call.items("keywords")) {
    std::string name = k.text("arg").value_or("**");
    if (!kKnown.count(name)) {
      r.error(k, "layout.syntax",
              "Layout has no keyword '" + name +
                  "' (known: strides, order, swizzle, pack, space; "
                  "shard, replica, offset for Layout.axe)");
      return false;
    }
    if (name == "shard" || name == "replica" || name == "offset") continue;
    auto v = c.eval(k.child("value"));
    bool ok = v.has_value();
    try {
      if (ok && name == "strides") l.mem.strides = v->get<std::vector<int64_t>>();
      if (ok && name == "order") l.mem.order = v->get<std::vector<int64_t>>();
    } catch (const nlohmann::json::exception &) {
      ok = false;
    }
    if (ok && name == "swizzle") l.mem.swizzle = *v;
    if (ok && name == "pack") l.mem.pack = *v;
    if (ok && name == "space") {
      ok = v->is_string();
      if (ok) l.hw.space = v->get<std::string>();
    }
    if (!ok) {
      r.error(k, "layout.syntax",
              "keyword '" + name + "' needs a constant (" +
                  (name == "space"                        ? "a memory space name such as \"UB\""
                   : name == "strides" || name == "order" ? "a list of ints"
                                                          : "an int or string") +
                  ")");
      return false;
    }
  }
  return true;
}

} // namespace

std::optional<AxeLayout> read_layout(htp::NodeRef expr, const TensorInfo &t, const Mesh &mesh,
                                     const Constants &c, Reporter &r) {
  if (auto converted = expr.attr(kConvertedAttr)) {
    auto partial = layout_from_json(nlohmann::json::parse(*converted, nullptr, false));
    auto l = partial ? complete(*partial, t, mesh) : Result<AxeLayout>(partial.error());
    if (!l) {
      r.error(expr, l.error());
      return std::nullopt;
    }
    return *l;
  }
  if (!is_layout_call(expr)) {
    std::string spelled = expr.is("Call") ? expr.child("func").dotted_name() : expr.dotted_name();
    r.error(
        expr, "layout.kind",
        "'" + (spelled.empty() ? std::string(expr.type()) : spelled) +
            "' is not a layout: write Layout(\"S(0)R\") or Layout.axe(...); a layout of another kind needs "
            "the plugin of that kind, which converts it to Axe (node attribute layout.axe)");
    return std::nullopt;
  }
  auto l = is_axe_form(expr) ? read_axe_form(expr, t, mesh, c, r) : read_text_form(expr, t, mesh, c, r);
  if (!l || !apply_facets(expr, *l, c, r)) return std::nullopt;
  auto checked = validate(*l, mesh);
  if (!checked) {
    r.error(expr, checked.error());
    return std::nullopt;
  }
  return *checked;
}

} // namespace htp::axe
