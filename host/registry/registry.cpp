#include "registry/registry.hpp"

#include "ast/unicode.hpp"

namespace htp {

std::optional<Diagnostic> Registry::check_insertable(const Component &c) const {
  if (c.id.empty())
    return Diagnostic::error("registry.empty-id", std::string("plugin '") + c.plugin.name + "' registered a " +
                                                      component_kind_name(c.kind) + " with an empty id");
  auto where = [](const Component &x) { return x.plugin.path.empty() ? x.plugin.name : x.plugin.path; };
  // Strings crossing the ABI are UTF-8 (docs/abi.md); one that is not failed later, as an internal error of
  // `plugins manifest` or `plugins inspect --json`.
  auto not_utf8 = [&](const char *field) {
    return Diagnostic::error("registry.utf8", std::string(component_kind_name(c.kind)) + " '" +
                                                  ast::replace_invalid_utf8(c.id) + "' of plugin '" +
                                                  ast::replace_invalid_utf8(c.plugin.name) + "' has a " + field +
                                                  " that is not UTF-8");
  };
  for (const auto &[field, text] : {std::pair<const char *, const std::string *>{"id", &c.id}, {"version", &c.version},
                                    {"summary", &c.summary}, {"name", &c.name}})
    if (!ast::is_valid_utf8(*text)) return not_utf8(field);
  for (const auto &[field, list] :
       {std::pair<const char *, const std::vector<std::string> *>{"provides entry", &c.provides},
        {"requires entry", &c.requires_}, {"conflicts entry", &c.conflicts}, {"accepts entry", &c.accepts},
        {"names entry", &c.names}, {"applies_to entry", &c.applies_to}, {"invalidates entry", &c.invalidates},
        {"before entry", &c.before}, {"after entry", &c.after}, {"targets entry", &c.targets},
        {"passes entry", &c.passes}})
    for (const std::string &text : *list)
      if (!ast::is_valid_utf8(text)) return not_utf8(field);
  // Target.Selected(name=T) is the host's: it holds for the compile's target. A component providing a
  // Target fact could claim another target's facts (a pass providing Target.Selected(name=pto-a2a3sim) while
  // compiling for aie-npu1).
  for (const std::string &fact : c.provides)
    if (fact.rfind("Target.", 0) == 0)
      return Diagnostic::error("registry.reserved-fact",
                               std::string(component_kind_name(c.kind)) + " '" + c.id + "' of plugin '" + c.plugin.name +
                                   "' provides " + fact + ": Target facts are the host's (Target.Selected holds "
                                   "for the compile's target); provide a fact of your own namespace");
  // Both components of a clash, for its notes.
  auto clash = [&](Diagnostic d, const Component &prev) {
    d.with_note("first: " + std::string(component_kind_name(prev.kind)) + " '" + prev.id + "' from " + where(prev));
    d.with_note("second: " + std::string(component_kind_name(c.kind)) + " '" + c.id + "' from " + where(c));
    return d;
  };
  if (auto it = by_id_.find(c.id); it != by_id_.end())
    return clash(Diagnostic::error("registry.duplicate-id", "component id '" + c.id + "' registered by plugin '" +
                                                                c.plugin.name + "' is already registered by plugin '" +
                                                                it->second->plugin.name + "'"),
                 *it->second);
  // A dialect, intrinsic set or layout kind is found by its name (`htp.dialects.tile`, `Uses.Intrinsic(set=pto)`):
  // a second of one name would displace the first for every program, the resolver trying ids in order.
  const bool named = c.kind == ComponentKind::Dialect || c.kind == ComponentKind::IntrinsicSet ||
                     c.kind == ComponentKind::Layout;
  if (auto n = by_name_.find({c.kind, c.name}); named && !c.name.empty() && n != by_name_.end())
    return clash(Diagnostic::error("registry.duplicate-name",
                                   std::string(component_kind_name(c.kind)) + " '" + c.name + "' registered by plugin '" +
                                       c.plugin.name + "' (component '" + c.id + "') is already registered by plugin '" +
                                       n->second->plugin.name + "' (component '" + n->second->id +
                                       "'); a program names it by that name, so one plugin set holds one: rename it, or "
                                       "load only one of the two plugins"),
                 *n->second);
  return std::nullopt;
}

Expected<const Component *> Registry::add(Component c) {
  if (auto error = check_insertable(c)) return std::move(*error);
  auto owned = std::make_unique<Component>(std::move(c));
  const Component *ptr = owned.get();
  components_.push_back(std::move(owned));
  PackedComponent &p = packed_.emplace_back();
  p.component = ptr;
  p.kind = ptr->kind;
  p.first = static_cast<uint32_t>(packed_texts_.size());
  packed_texts_.push_back(arena_.copy(ptr->id));
  packed_texts_.push_back(arena_.copy(ptr->name));
  const std::vector<std::string> *lists[PackedComponent::kLists] = {
      &ptr->provides, &ptr->requires_, &ptr->conflicts, &ptr->accepts, &ptr->applies_to, &ptr->invalidates};
  for (size_t k = 0; k < PackedComponent::kLists; ++k) {
    p.sizes[k] = static_cast<uint32_t>(lists[k]->size());
    for (const std::string &text : *lists[k])
      packed_texts_.push_back(arena_.copy(text));
  }
  by_id_.emplace(ptr->id, ptr);
  if (!ptr->name.empty()) by_name_.emplace(std::pair(ptr->kind, ptr->name), ptr);
  return ptr;
}

const Component *Registry::find(std::string_view id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : it->second;
}

std::vector<const Component *> Registry::of_kind(ComponentKind kind) const {
  std::vector<const Component *> out;
  for (const auto &c : components_)
    if (c->kind == kind) out.push_back(c.get());
  return out;
}

void Registry::set_plugin_sha256(std::string_view plugin, const std::string &sha256) {
  for (auto &c : components_)
    if (c->plugin.name == plugin) c->plugin.sha256 = sha256;
}

std::vector<const Component *> Registry::of_plugin(std::string_view plugin) const {
  std::vector<const Component *> out;
  for (const auto &c : components_)
    if (c->plugin.name == plugin) out.push_back(c.get());
  return out;
}

}  // namespace htp
