#include "resolver/explanation.hpp"

#include <algorithm>

namespace htp {

namespace {


} // namespace

std::vector<std::string> near_matches(const Selection &selection, const Capability &pattern, size_t limit) {
  const CapabilityIndex &ix = selection.index();
  std::vector<std::string> out;
  size_t more = 0;
  for (FactId f : ix.facts_named(pattern.ns, pattern.name)) {
    if (ix.fact(f).ns != pattern.ns || ix.fact(f).name != pattern.name) continue;
    auto mismatch = first_mismatch(pattern, ix.fact(f));
    if (!mismatch) continue;
    if (out.size() >= limit) {
      ++more;
      continue;
    }
    const auto &providers = ix.providers(f);
    std::string who = providers.empty() ? "nothing" : describe_component(*ix.at(providers.front()).component);
    if (providers.size() > 1) who += " and " + std::to_string(providers.size() - 1) + " more";
    out.push_back("nearly: " + who + " provides " + std::string(ix.fact_text(f)) + " — key '" + mismatch->key +
                  "' differs: " + mismatch->reason);
  }
  if (more > 0)
    out.push_back("nearly: " + std::to_string(more) + " more facts named " + pattern.qualified_name());
  return out;
}

Diagnostic explain_unmet(const Selection &selection, uint32_t need,
                         const std::vector<Obligation> &obligations, const std::vector<Alternative> &rejected,
                         const std::vector<Alternative> &failed, const UnloadedCatalog &unloaded) {
  const CapabilityIndex &ix = selection.index();
  const Need &n = selection.needs()[need];
  auto describe = [&](ComponentIndex c) { return describe_component(*ix.at(c).component); };

  Diagnostic d;
  if (n.kind == Need::Kind::Requirement) {
    const Capability &req = ix.at(n.owner).requires_[n.entry];
    std::string tail = rejected.empty() && failed.empty() ? ", which nothing selected provides"
                                                          : ", and no provider of it can be added";
    d = Diagnostic::error("resolve.unmet", describe(n.owner) + " requires " + to_string(req) + tail);
    for (const Alternative &a : rejected)
      d.with_note(describe(a.component) + " provides it, but " + a.verdict);
    for (const Alternative &a : failed)
      d.with_note("choosing " + describe(a.component) + " failed: " + a.verdict);
    for (const std::string &s : near_matches(selection, req))
      d.with_note(s);
    for (const std::string &s : unloaded.providers_of(req))
      d.with_note(s);
    if (d.notes.empty()) d.with_note("no loaded or known component provides " + req.qualified_name());
    return d;
  }

  const Obligation &o = obligations[n.entry];
  std::span<const ComponentIndex> pool = selection.need_pool(n);
  std::string tail = pool.empty() ? ", which is not loaded" : ", and none can be added";
  std::string program = o.label.empty() ? o.display() : o.display() + " (" + to_string(o.capability) + ")";
  d = Diagnostic::error("resolve.unmet", program + " needs " + n.what + tail, o.span);
  for (const Alternative &a : rejected)
    d.with_note(describe(a.component) + " would supply it, but " + a.verdict);
  for (const Alternative &a : failed)
    d.with_note("choosing " + describe(a.component) + " failed: " + a.verdict);
  // Components with the right name but not the op / facet the obligation uses.
  const char *name_key = n.needed_kind == ComponentKind::Dialect        ? "name"
                         : n.needed_kind == ComponentKind::IntrinsicSet ? "set"
                                                                        : "kind";
  const auto *name = o.capability.find(name_key);
  const auto *text = name ? std::get_if<std::string>(name) : nullptr;
  if (text) {
    for (ComponentIndex c : ix.named(n.needed_kind, *text)) {
      const Component &comp = *ix.at(c).component;
      if (std::find(pool.begin(), pool.end(), c) != pool.end()) continue;
      const char *member_key = n.needed_kind == ComponentKind::IntrinsicSet ? "op" : "facet";
      const auto *member = o.capability.find(member_key);
      std::string m = member ? to_string(*member) : std::string("?");
      d.with_note("nearly: " + describe(c) + " has no " + member_key + " '" + m +
                  "' (it has: " + join_text(comp.names) + ")");
    }
    for (const std::string &s : unloaded.named(n.needed_kind, *text))
      d.with_note(s);
  }
  if (d.notes.empty()) d.with_note("no loaded or known plugin registers " + n.what);
  return d;
}

Diagnostic explain_unaccepted(const Selection &selection, const Obligation &obligation,
                              const std::string &target, const UnloadedCatalog &unloaded) {
  const CapabilityIndex &ix = selection.index();
  std::vector<std::string> hints;
  for (const PatternRef &ref : ix.acceptors_matching(obligation.capability)) {
    const Component &c = *ix.at(ref.component).component;
    std::string h = c.id + " accepts it";
    if (!c.targets.empty())
      h += " for " + join_text(c.targets);
    else
      h += " but is not selected";
    if (hints.empty() || hints.back() != h) hints.push_back(std::move(h));
  }
  for (std::string &h : unloaded.acceptors_of(obligation.capability))
    hints.push_back(std::move(h));
  std::string message = obligation.display() + " is not accepted by target " + target +
                        " — no selected component accepts " + to_string(obligation.capability) + "; ";
  message += hints.empty() ? "no loaded or known component accepts it" : join_text(hints, "; ");
  return Diagnostic::error("resolve.unaccepted", std::move(message), obligation.span);
}

} // namespace htp
