#include "resolver/capability_index.hpp"

#include <algorithm>

#include "resolver/capability_diagnostic.hpp"

namespace htp {

namespace {

const std::vector<FactId> kNoFacts;
const std::vector<uint32_t> kNoPatterns;
const std::vector<PatternRef> kNoRefs;

/// Parses one capability list of a component, reporting malformed entries.
bool parse_list(const Component &c, const std::vector<std::string> &texts, const char *field,
                CapabilityMode mode, bool allow_optional, std::vector<Capability> &out,
                DiagnosticList &diagnostics) {
  bool ok = true;
  out.reserve(texts.size());
  for (const std::string &text : texts) {
    std::string where = std::string(field) + " of " + component_kind_name(c.kind) + " '" + c.id +
                        "' (plugin '" + c.plugin.name + "')";
    auto parsed = parse_capability(text, mode);
    if (parsed && parsed->optional && !allow_optional)
      parsed = CapabilityError{text.find('?'), std::string("'?' is not allowed in ") + field};
    if (!parsed) {
      diagnostics.report(capability_diagnostic(parsed.error(), text, where));
      ok = false;
      continue;
    }
    out.push_back(std::move(parsed.value()));
  }
  return ok;
}

} // namespace

std::string fact_param_key(const std::string &qualified_name, const std::string &key,
                           const std::string &text) {
  std::string k;
  k.reserve(qualified_name.size() + key.size() + text.size() + 2);
  k += qualified_name;
  k += '\x1f';
  k += key;
  k += '\x1f';
  k += text;
  return k;
}

CapabilityIndex::CapabilityIndex(const Registry &registry) {
  std::vector<const Component *> sorted;
  sorted.reserve(registry.size());
  for (const auto &c : registry.components())
    sorted.push_back(c.get());
  std::sort(sorted.begin(), sorted.end(),
            [](const Component *a, const Component *b) { return a->id < b->id; });

  components_.resize(sorted.size());
  by_id_.reserve(sorted.size() * 2);
  by_kind_.resize(7);
  applies_needed_.assign(sorted.size(), 0);
  for (ComponentIndex i = 0; i < sorted.size(); ++i) {
    const Component &c = *sorted[i];
    IndexedComponent &ic = components_[i];
    ic.component = &c;
    by_id_.emplace(c.id, i);
    bool ok = true;
    ok &= parse_list(c, c.provides, "provides", CapabilityMode::Fact, false, ic.provides, diagnostics_);
    ok &=
        parse_list(c, c.requires_, "requires", CapabilityMode::Requirement, true, ic.requires_, diagnostics_);
    ok &= parse_list(c, c.conflicts, "conflicts", CapabilityMode::Requirement, false, ic.conflicts,
                     diagnostics_);
    ok &= parse_list(c, c.accepts, "accepts", CapabilityMode::Requirement, false, ic.accepts, diagnostics_);
    ok &= parse_list(c, c.applies_to, "applies_to", CapabilityMode::Requirement, true, ic.applies_to,
                     diagnostics_);
    ok &= parse_list(c, c.invalidates, "invalidates", CapabilityMode::Requirement, false, ic.invalidates,
                     diagnostics_);
    ic.malformed = !ok;
    by_kind_[static_cast<size_t>(c.kind)].push_back(i);
    if (ic.malformed) continue;
    for (const Capability &p : ic.provides)
      ic.provided.push_back(intern(p));
    std::sort(ic.provided.begin(), ic.provided.end());
    ic.provided.erase(std::unique(ic.provided.begin(), ic.provided.end()), ic.provided.end());
    for (FactId f : ic.provided)
      providers_[f].push_back(i); // i ascends, so provider lists stay sorted
  }

  // Patterns are matched against the final fact table once, so each resolution only looks them up.
  appliers_of_.resize(facts_.size());
  conflicters_of_.resize(facts_.size());
  for (ComponentIndex i = 0; i < components_.size(); ++i) {
    const IndexedComponent &ic = components_[i];
    if (ic.malformed) continue;
    if (ic.component->kind == ComponentKind::Pass) {
      for (uint32_t e = 0; e < ic.applies_to.size(); ++e) {
        const Capability &pat = ic.applies_to[e];
        if (pat.optional) continue;
        auto id = static_cast<uint32_t>(applies_.size());
        applies_.push_back({i, e});
        appliers_by_name_[pat.qualified_name()].push_back(id);
        for (FactId f : matching_facts(pat))
          appliers_of_[f].push_back(id);
        ++applies_needed_[i];
      }
    }
    for (uint32_t e = 0; e < ic.conflicts.size(); ++e) {
      auto id = static_cast<uint32_t>(conflicts_.size());
      conflicts_.push_back({i, e});
      conflicters_by_name_[ic.conflicts[e].qualified_name()].push_back(id);
      for (FactId f : matching_facts(ic.conflicts[e]))
        conflicters_of_[f].push_back(id);
    }
    for (uint32_t e = 0; e < ic.accepts.size(); ++e)
      acceptors_by_name_[ic.accepts[e].qualified_name()].push_back({i, e});
  }
}

FactId CapabilityIndex::intern(const Capability &fact) {
  std::string text = to_string(fact);
  auto [it, inserted] = fact_by_text_.try_emplace(text, static_cast<FactId>(facts_.size()));
  if (!inserted) return it->second;
  FactId id = it->second;
  std::string qn = fact.qualified_name();
  for (const CapabilityParam &p : fact.params)
    if (const auto *s = std::get_if<std::string>(&p.value))
      facts_by_param_[fact_param_key(qn, p.key, *s)].push_back(id);
  facts_by_name_[std::move(qn)].push_back(id);
  facts_.push_back(fact);
  fact_texts_.push_back(std::move(text));
  providers_.emplace_back();
  return id;
}

std::optional<ComponentIndex> CapabilityIndex::find(std::string_view id) const {
  auto it = by_id_.find(std::string(id));
  if (it == by_id_.end()) return std::nullopt;
  return it->second;
}

std::vector<FactId> CapabilityIndex::matching_facts(const Capability &pattern) const {
  std::string qn = pattern.qualified_name();
  const std::vector<FactId> *best = &facts_named(qn);
  // A text parameter must be equal, so the shortest posting list of one bounds the scan.
  for (const CapabilityParam &p : pattern.params) {
    const auto *s = std::get_if<std::string>(&p.value);
    if (!s) continue;
    auto it = facts_by_param_.find(fact_param_key(qn, p.key, *s));
    if (it == facts_by_param_.end()) return {};
    if (it->second.size() < best->size()) best = &it->second;
  }
  std::vector<FactId> out;
  for (FactId f : *best)
    if (matches(pattern, facts_[f])) out.push_back(f);
  return out;
}

const std::vector<FactId> &CapabilityIndex::facts_named(const std::string &qualified_name) const {
  auto it = facts_by_name_.find(qualified_name);
  return it == facts_by_name_.end() ? kNoFacts : it->second;
}

const std::vector<uint32_t> &CapabilityIndex::appliers_named(const std::string &qualified_name) const {
  auto it = appliers_by_name_.find(qualified_name);
  return it == appliers_by_name_.end() ? kNoPatterns : it->second;
}

const std::vector<uint32_t> &CapabilityIndex::conflicters_named(const std::string &qualified_name) const {
  auto it = conflicters_by_name_.find(qualified_name);
  return it == conflicters_by_name_.end() ? kNoPatterns : it->second;
}

const std::vector<PatternRef> &CapabilityIndex::acceptors_named(const std::string &qualified_name) const {
  auto it = acceptors_by_name_.find(qualified_name);
  return it == acceptors_by_name_.end() ? kNoRefs : it->second;
}

std::vector<ComponentIndex> CapabilityIndex::claiming(ComponentKind kind, std::string_view target) const {
  std::vector<ComponentIndex> out;
  for (ComponentIndex c : of_kind(kind)) {
    const IndexedComponent &ic = components_[c];
    if (ic.malformed) continue;
    const auto &ts = ic.component->targets;
    if (std::find(ts.begin(), ts.end(), target) != ts.end()) out.push_back(c);
  }
  return out;
}

std::vector<std::string> CapabilityIndex::targets() const {
  std::vector<std::string> out;
  for (ComponentKind k : {ComponentKind::Backend, ComponentKind::Binding, ComponentKind::Pipeline})
    for (ComponentIndex c : of_kind(k))
      for (const std::string &t : components_[c].component->targets)
        out.push_back(t);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

} // namespace htp
