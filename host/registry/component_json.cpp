#include "registry/component_json.hpp"

namespace htp {

namespace {

void put_list(nlohmann::json &j, const char *key, const std::vector<std::string> &v) {
  if (!v.empty()) j[key] = v;
}

std::vector<std::string> get_list(const JsonReader &r, const char *key) {
  auto m = r.maybe(key);
  return m ? m->strings() : std::vector<std::string>{};
}

const char *kind_name_key(ComponentKind k) {
  switch (k) {
  case ComponentKind::Dialect: return "name";
  case ComponentKind::IntrinsicSet: return "set";
  case ComponentKind::Layout: return "layout_kind";
  default: return nullptr;
  }
}

const char *kind_names_key(ComponentKind k) {
  switch (k) {
  case ComponentKind::Dialect: return "surface";
  case ComponentKind::IntrinsicSet: return "ops";
  case ComponentKind::Layout: return "facets";
  default: return nullptr;
  }
}

}  // namespace

nlohmann::json component_to_json(const Component &c) {
  nlohmann::json j = nlohmann::json::object();
  j["kind"] = component_kind_name(c.kind);
  j["id"] = c.id;
  j["version"] = c.version;
  if (!c.summary.empty()) j["summary"] = c.summary;
  put_list(j, "provides", c.provides);
  put_list(j, "requires", c.requires_);
  put_list(j, "conflicts", c.conflicts);
  put_list(j, "accepts", c.accepts);
  if (const char *k = kind_name_key(c.kind)) j[k] = c.name;
  if (const char *k = kind_names_key(c.kind)) put_list(j, k, c.names);
  switch (c.kind) {
  case ComponentKind::Pass:
    j["stage"] = pass_stage_name(c.stage);
    put_list(j, "applies_to", c.applies_to);
    put_list(j, "invalidates", c.invalidates);
    put_list(j, "before", c.before);
    put_list(j, "after", c.after);
    break;
  case ComponentKind::Pipeline:
    j["targets"] = c.targets;
    put_list(j, "passes", c.passes);
    break;
  case ComponentKind::Backend:
  case ComponentKind::Binding:
    j["targets"] = c.targets;
    j["priority"] = c.priority;
    break;
  default: break;
  }
  return j;
}

Component component_from_json(const JsonReader &r) {
  r.object();
  Component c;
  auto kind = r.at("kind");
  if (!parse_component_kind(kind.str(), c.kind)) kind.fail("unknown component kind '" + kind.str() + "'");
  c.id = r.at("id").str();
  c.version = r.at("version").str();
  if (auto s = r.maybe("summary")) c.summary = s->str();
  c.provides = get_list(r, "provides");
  c.requires_ = get_list(r, "requires");
  c.conflicts = get_list(r, "conflicts");
  c.accepts = get_list(r, "accepts");
  if (const char *k = kind_name_key(c.kind)) c.name = r.at(k).str();
  if (const char *k = kind_names_key(c.kind)) c.names = get_list(r, k);
  switch (c.kind) {
  case ComponentKind::Pass: {
    auto stage = r.at("stage");
    if (!parse_pass_stage(stage.str(), c.stage)) stage.fail("unknown pass stage '" + stage.str() + "'");
    c.applies_to = get_list(r, "applies_to");
    c.invalidates = get_list(r, "invalidates");
    c.before = get_list(r, "before");
    c.after = get_list(r, "after");
    break;
  }
  case ComponentKind::Pipeline:
    c.targets = r.at("targets").strings();
    c.passes = get_list(r, "passes");
    break;
  case ComponentKind::Backend:
  case ComponentKind::Binding: {
    c.targets = r.at("targets").strings();
    auto p = r.at("priority");
    int64_t v = p.integer();
    if (v < INT32_MIN || v > INT32_MAX) p.fail("priority out of the 32-bit range");
    c.priority = static_cast<int32_t>(v);
    break;
  }
  default: break;
  }
  return c;
}

}  // namespace htp
