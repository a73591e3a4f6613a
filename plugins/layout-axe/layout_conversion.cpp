#include "layout_conversion.hpp"

namespace htp::axe {

namespace {

Result<AxeLayout> axe_to_axe(const nlohmann::json &doc, const TensorInfo &t, const Mesh &mesh) {
  auto l = layout_from_json(doc);
  if (!l) return l.error();
  return complete(*l, t, mesh);
}

Result<nlohmann::json> axe_from_axe(const AxeLayout &l, const Mesh &mesh) {
  return nlohmann::json(to_json(l, mesh));
}

Result<AxeLayout> dist_to_axe(const nlohmann::json &doc, const TensorInfo &t, const Mesh &mesh) {
  if (!doc.contains("text") || !doc["text"].is_string())
    return fail("layout.schema", "a dist layout needs a string 'text' such as \"S(0)R\"");
  auto spec = parse_dist(doc["text"].get<std::string>());
  if (!spec) return spec.error();
  return from_dist(*spec, t, mesh);
}

Result<nlohmann::json> dist_from_axe(const AxeLayout &l, const Mesh &mesh) {
  auto view = dist_view(l, mesh);
  if (!view || !l.pending.empty())
    return fail("layout.kind", "layout " + describe(l, mesh) +
                                   " has no dist spelling (only block shards of whole "
                                   "mesh axes, no offsets, nothing pending)");
  return nlohmann::json{{"kind", "dist"}, {"text", dist_text(*view)}};
}

} // namespace

ConversionRegistry ConversionRegistry::with_builtin_kinds() {
  ConversionRegistry r;
  r.add("axe", axe_to_axe, axe_from_axe);
  r.add("dist", dist_to_axe, dist_from_axe);
  return r;
}

void ConversionRegistry::add(const std::string &kind, ToAxe to_axe, FromAxe from_axe) {
  kinds_[kind] = Entry{std::move(to_axe), std::move(from_axe)};
}

std::vector<std::string> ConversionRegistry::kinds() const {
  std::vector<std::string> out;
  for (const auto &[k, e] : kinds_)
    out.push_back(k);
  return out;
}

const ConversionRegistry::Entry *ConversionRegistry::find(const std::string &kind) const {
  auto it = kinds_.find(kind);
  return it == kinds_.end() ? nullptr : &it->second;
}

namespace {

LayoutError unknown_kind(const std::string &kind, const std::vector<std::string> &known) {
  std::string list;
  for (const auto &k : known)
    list += (list.empty() ? "" : ", ") + k;
  return fail("layout.kind", "no conversion registered for layout kind '" + kind + "' (known: " + list + ")");
}

} // namespace

Result<AxeLayout> ConversionRegistry::to_axe(const nlohmann::json &doc, const TensorInfo &t,
                                             const Mesh &mesh) const {
  std::string kind = doc.is_object() ? doc.value("kind", std::string()) : std::string();
  const Entry *e = find(kind);
  if (!e) return unknown_kind(kind, kinds());
  auto l = e->to_axe(doc, t, mesh);
  if (l && kind != "axe") l->source_kind = kind;
  return l;
}

Result<nlohmann::json> ConversionRegistry::from_axe(const AxeLayout &l, const std::string &kind,
                                                    const Mesh &mesh) const {
  const Entry *e = find(kind);
  if (!e) return unknown_kind(kind, kinds());
  return e->from_axe(l, mesh);
}

Result<nlohmann::json> ConversionRegistry::convert(const nlohmann::json &doc, const std::string &kind,
                                                   const TensorInfo &t, const Mesh &mesh) const {
  auto l = to_axe(doc, t, mesh);
  if (!l) return l.error();
  return from_axe(*l, kind, mesh);
}

} // namespace htp::axe
