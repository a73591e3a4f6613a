#include "resolver/unloaded_catalog.hpp"

#include "diag/diagnostic.hpp"

#include <algorithm>

namespace htp {

std::string describe_plugin_file(const PluginRef &plugin) {
  std::string s = "plugin '" + plugin.name + "'";
  if (!plugin.version.empty()) s += " " + plugin.version;
  if (!plugin.path.empty()) s += " (" + plugin.path + ")";
  return s;
}

namespace {

std::string load_hint(const Component &c) {
  // A plugin that was given but failed to load: loading it again is not the advice, its failure is.
  if (!c.plugin.load_error.empty())
    return " — not loaded: " + describe_plugin_file(c.plugin) + " was given but did not load (" +
           c.plugin.load_error + "); fix that";
  std::string s = " — not loaded; load " + describe_plugin_file(c.plugin);
  if (!c.plugin.path.empty()) s += " with --plugins " + c.plugin.path;
  return s;
}

} // namespace

UnloadedCatalog::UnloadedCatalog(const std::vector<Component> &known) {
  std::vector<const Component *> sorted;
  for (const Component &c : known)
    sorted.push_back(&c);
  std::sort(sorted.begin(), sorted.end(), [](const Component *a, const Component *b) {
    return a->id != b->id ? a->id < b->id : a->plugin.name < b->plugin.name;
  });
  for (const Component *c : sorted) {
    Entry e{c, {}, {}};
    for (const auto &t : c->provides)
      if (auto p = parse_capability(t, CapabilityMode::Fact)) e.provides.push_back(*p);
    for (const auto &t : c->accepts)
      if (auto p = parse_capability(t, CapabilityMode::Requirement)) e.accepts.push_back(*p);
    entries_.push_back(std::move(e));
  }
}

std::vector<std::string> UnloadedCatalog::providers_of(const Capability &pattern) const {
  std::vector<std::string> out;
  for (const Entry &e : entries_)
    for (const Capability &f : e.provides)
      if (matches(pattern, f)) {
        out.push_back(std::string(component_kind_name(e.component->kind)) + " '" + e.component->id +
                      "' provides " + to_string(f) + load_hint(*e.component));
        break;
      }
  return out;
}

std::vector<std::string> UnloadedCatalog::acceptors_of(const Capability &obligation) const {
  std::vector<std::string> out;
  for (const Entry &e : entries_)
    for (const Capability &a : e.accepts)
      if (matches(a, obligation)) {
        std::string s = e.component->id + " accepts it";
        if (!e.component->targets.empty()) s += " for " + join_text(e.component->targets);
        out.push_back(s + load_hint(*e.component));
        break;
      }
  return out;
}

std::vector<std::string> UnloadedCatalog::claiming(const std::string &target) const {
  std::vector<std::string> out;
  for (const Entry &e : entries_) {
    const auto &ts = e.component->targets;
    if (std::find(ts.begin(), ts.end(), target) != ts.end())
      out.push_back(std::string(component_kind_name(e.component->kind)) + " '" + e.component->id +
                    "' supports target " + target + load_hint(*e.component));
  }
  return out;
}

std::vector<std::string> UnloadedCatalog::named(ComponentKind kind, const std::string &name) const {
  std::vector<std::string> out;
  for (const Entry &e : entries_)
    if (e.component->kind == kind && e.component->name == name)
      out.push_back(std::string(component_kind_name(kind)) + " '" + e.component->id + "' is named " + name +
                    load_hint(*e.component));
  return out;
}

std::vector<std::string> UnloadedCatalog::with_id(const std::string &id) const {
  std::vector<std::string> out;
  for (const Entry &e : entries_)
    if (e.component->id == id)
      out.push_back(std::string(component_kind_name(e.component->kind)) + " '" + id + "'" +
                    load_hint(*e.component));
  return out;
}

std::vector<std::string> UnloadedCatalog::targets() const {
  std::vector<std::string> out;
  for (const Entry &e : entries_)
    for (const auto &t : e.component->targets)
      out.push_back(t);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace htp
