#include "resolver/selection.hpp"

#include <algorithm>
#include <functional>

namespace htp {

namespace {
constexpr uint32_t kNeverApplies = UINT32_MAX;
}

const char *choice_rule_name(ChoiceRule rule) {
  switch (rule) {
  case ChoiceRule::TargetBackend: return "target-backend";
  case ChoiceRule::TargetBinding: return "target-binding";
  case ChoiceRule::TargetPipeline: return "target-pipeline";
  case ChoiceRule::PipelineTemplate: return "pipeline-template";
  case ChoiceRule::ExplicitPassList: return "explicit-pass-list";
  case ChoiceRule::AppliesTo: return "applies-to";
  case ChoiceRule::Requirement: return "requirement";
  case ChoiceRule::Obligation: return "obligation";
  }
  return "requirement";
}

bool is_exclusive_namespace(std::string_view ns) {
  return ns == "Backend" || ns == "Binding";
}

std::string describe_component(const Component &c) {
  std::string s = std::string(component_kind_name(c.kind)) + " '" + c.id + "'";
  if (!c.plugin.name.empty()) {
    s += " (plugin '" + c.plugin.name + "'";
    if (!c.plugin.version.empty()) s += " " + c.plugin.version;
    s += ")";
  }
  return s;
}

Selection::Selection(const CapabilityIndex &index, std::vector<LocalFact> local_facts, bool auto_apply)
    : index_(index), auto_apply_(auto_apply) {
  // Local facts are unique by text; a repeated obligation is one fact.
  for (LocalFact &l : local_facts) {
    std::string text = to_string(l.capability);
    if (std::find(local_text_.begin(), local_text_.end(), text) != local_text_.end()) continue;
    local_text_.push_back(std::move(text));
    local_exclusive_.push_back(is_exclusive_namespace(l.capability.ns) ? 1 : 0);
    local_.push_back(std::move(l));
  }
  const size_t n = index.components().size();
  count_.assign(index.fact_count() + local_.size(), 0);
  pattern_present_.assign(index.applies_patterns().size(), 0);
  unmet_applies_.assign(n, kNeverApplies);
  for (ComponentIndex c = 0; c < n; ++c)
    if (index.required_applies(c) > 0) unmet_applies_[c] = index.required_applies(c);
  chosen_.assign(n, 0);
  banned_.assign(n, 0);
  for (uint32_t i = 0; i < local_.size(); ++i) {
    const Capability &cap = local_[i].capability;
    for (const CapabilityParam &p : cap.params)
      if (const auto *text = std::get_if<std::string>(&p.value))
        local_by_param_[param_key(cap.ns, cap.name, p.key, *text)].push_back(i);
    auto named = std::find_if(local_by_name_.begin(), local_by_name_.end(), [&](const LocalName &l) {
      const Capability &first = local_[l.locals.front()].capability;
      return first.ns == cap.ns && first.name == cap.name;
    });
    if (named == local_by_name_.end()) named = local_by_name_.insert(local_by_name_.end(), LocalName{});
    named->locals.push_back(i);
    local_appliers_.push_back(index.appliers_matching(local_[i].capability));
    local_conflicters_.push_back(index.conflicters_matching(local_[i].capability));
  }
  for (FactId f = index.fact_count(); f < count_.size(); ++f)
    increment(f);
}

const Capability &Selection::fact(FactId f) const {
  return is_local(f) ? local_[f - index_.fact_count()].capability : index_.fact(f);
}

std::string_view Selection::fact_text(FactId f) const {
  return is_local(f) ? local_text_[f - index_.fact_count()] : index_.fact_text(f);
}

void Selection::append_local_matches(const Capability &pattern, std::vector<FactId> &out) const {
  if (local_.empty()) return;
  auto it = std::find_if(local_by_name_.begin(), local_by_name_.end(), [&](const LocalName &l) {
    const Capability &first = local_[l.locals.front()].capability;
    return first.name == pattern.name && first.ns == pattern.ns;
  });
  if (it == local_by_name_.end()) return;
  const std::vector<uint32_t> *best = &it->locals;
  // As for index facts: a text parameter must be equal, so its posting list bounds the scan.
  for (const CapabilityParam &p : pattern.params) {
    const auto *text = std::get_if<std::string>(&p.value);
    if (!text) continue;
    auto hit = local_by_param_.find(param_key(pattern.ns, pattern.name, p.key, *text));
    if (hit == local_by_param_.end()) return;
    if (hit->second.size() < best->size()) best = &hit->second;
  }
  for (uint32_t i : *best)
    if (matches(pattern, local_[i].capability)) out.push_back(index_.fact_count() + i);
}

std::vector<FactId> Selection::matching(const Capability &pattern) const {
  std::vector<FactId> out = index_.matching_facts(pattern);
  append_local_matches(pattern, out);
  return out;
}

void Selection::append_requirement_matches(ComponentIndex c, uint32_t entry, std::vector<FactId> &out) const {
  auto hits = index_.requires_matches(c, entry);
  out.insert(out.end(), hits.begin(), hits.end());
  append_local_matches(index_.at(c).requires_[entry], out);
}

std::vector<FactId> Selection::applies_to_matches(ComponentIndex c, uint32_t entry) const {
  auto hits = index_.applies_to_matches(c, entry);
  std::vector<FactId> out(hits.begin(), hits.end());
  append_local_matches(index_.at(c).applies_to[entry], out);
  return out;
}

std::vector<FactId> Selection::invalidation_matches(ComponentIndex c, uint32_t entry) const {
  const IndexedComponent &ic = index_.at(c);
  auto hits = index_.invalidates_matches(c, entry);
  std::vector<FactId> out(hits.begin(), hits.end());
  append_local_matches(ic.invalidates[entry], out);
  return out;
}

std::optional<ComponentIndex> Selection::chosen_provider(FactId f) const {
  if (is_local(f)) return std::nullopt;
  for (ComponentIndex c : index_.providers(f))
    if (chosen(c)) return c;
  return std::nullopt;
}

std::string Selection::source_of(FactId f) const {
  if (count_[f] == 0) return {};
  if (is_local(f)) return local_[f - index_.fact_count()].source;
  if (auto c = chosen_provider(f)) return describe_component(*index_.at(*c).component);
  return {};
}

std::span<const uint32_t> Selection::appliers(FactId f) const {
  if (is_local(f)) return local_appliers_[f - index_.fact_count()];
  return index_.appliers_of(f);
}

std::span<const uint32_t> Selection::conflicters(FactId f) const {
  if (is_local(f)) return local_conflicters_[f - index_.fact_count()];
  return index_.conflicters_of(f);
}

void Selection::increment(FactId f) {
  if (count_[f]++ != 0) return;
  for (uint32_t p : appliers(f)) {
    if (pattern_present_[p]++ != 0) continue;
    ComponentIndex c = index_.applies_patterns()[p].component;
    if (--unmet_applies_[c] == 0 && auto_apply_ && !chosen_[c]) {
      pending_.push_back(c);
      std::push_heap(pending_.begin(), pending_.end(), std::greater<>());
    }
  }
  if (exclusive(f)) {
    std::string qn = fact(f).qualified_name();
    auto it =
        std::find_if(exclusive_.begin(), exclusive_.end(), [&](const auto &e) { return e.first == qn; });
    if (it == exclusive_.end())
      exclusive_.emplace_back(std::move(qn), 1);
    else
      ++it->second;
  }
}

void Selection::decrement(FactId f) {
  if (--count_[f] != 0) return;
  for (uint32_t p : appliers(f)) {
    if (--pattern_present_[p] != 0) continue;
    ++unmet_applies_[index_.applies_patterns()[p].component];
  }
  if (exclusive(f)) {
    std::string qn = fact(f).qualified_name();
    auto it =
        std::find_if(exclusive_.begin(), exclusive_.end(), [&](const auto &e) { return e.first == qn; });
    if (it != exclusive_.end() && --it->second == 0) exclusive_.erase(it);
  }
}

std::optional<Diagnostic> Selection::incompatibility(ComponentIndex c) const {
  const IndexedComponent &ic = index_.at(c);
  const Component &comp = *ic.component;
  if (ic.malformed)
    return Diagnostic::error("resolve.malformed",
                             describe_component(comp) + " has malformed capability text");
  // Its conflicts against what holds.
  for (uint32_t e = 0; e < ic.conflicts.size(); ++e) {
    const Capability &pattern = ic.conflicts[e];
    auto indexed = index_.conflicts_matches(c, e);
    std::vector<FactId> hits(indexed.begin(), indexed.end());
    append_local_matches(pattern, hits);
    for (FactId f : hits) {
      if (count_[f] == 0) continue;
      std::string other = source_of(f);
      Diagnostic d = Diagnostic::error("resolve.conflict", describe_component(comp) + " conflicts with " +
                                                               to_string(pattern) + ", which " + other +
                                                               " provides as " + std::string(fact_text(f)));
      d.with_note("one side: " + describe_component(comp) + " declares conflicts " + to_string(pattern));
      d.with_note("other side: " + other + " provides " + std::string(fact_text(f)));
      return d;
    }
  }
  // Chosen components' conflicts against what it provides.
  for (FactId f : ic.provided) {
    for (uint32_t p : conflicters(f)) {
      PatternRef ref = index_.conflict_patterns()[p];
      if (ref.component == c || !chosen_[ref.component]) continue;
      const Component &other = *index_.at(ref.component).component;
      std::string pattern = to_string(index_.at(ref.component).conflicts[ref.entry]);
      Diagnostic d =
          Diagnostic::error("resolve.conflict", describe_component(comp) + " provides " + std::string(fact_text(f)) +
                                                    ", which conflicts with " + describe_component(other));
      d.with_note("one side: " + describe_component(comp) + " provides " + std::string(fact_text(f)));
      d.with_note("other side: " + describe_component(other) + " declares conflicts " + pattern);
      return d;
    }
  }
  // Exclusive namespaces hold one name.
  for (FactId f : ic.provided) {
    if (!index_.exclusive(f)) continue;
    const Capability &cap = index_.fact(f);
    std::string qn = cap.qualified_name();
    for (const auto &[held, n] : exclusive_) {
      if (held == qn || held.compare(0, cap.ns.size() + 1, cap.ns + ".") != 0) continue;
      std::string holder;
      std::string_view held_name = std::string_view(held).substr(cap.ns.size() + 1);
      for (FactId g : index_.facts_named(cap.ns, held_name))
        if (count_[g] > 0 && index_.fact(g).ns == cap.ns && index_.fact(g).name == held_name) {
          holder = source_of(g);
          break;
        }
      Diagnostic d = Diagnostic::error("resolve.exclusive", describe_component(comp) + " provides " +
                                                                std::string(fact_text(f)) + ", but " + holder +
                                                                " provides " + held + "; namespace " +
                                                                cap.ns + " is exclusive (one per plan)");
      d.with_note("one side: " + describe_component(comp) + " provides " + std::string(fact_text(f)));
      d.with_note("other side: " + holder + " provides " + held);
      return d;
    }
  }
  return std::nullopt;
}

void Selection::add_one(Choice choice) {
  ComponentIndex c = choice.component;
  const IndexedComponent &ic = index_.at(c);
  trail_.push_back({c, needs_.size(), need_lists_.size()});
  chosen_[c] = 1;
  order_.push_back(c);
  choices_.push_back(std::move(choice));
  for (FactId f : ic.provided)
    increment(f);
  for (uint32_t e = 0; e < ic.requires_.size(); ++e) {
    if (ic.requires_[e].optional) continue;
    Need n;
    n.kind = Need::Kind::Requirement;
    n.owner = c;
    n.entry = e;
    n.matches_at = static_cast<uint32_t>(need_lists_.size());
    append_requirement_matches(c, e, need_lists_);
    n.matches_size = static_cast<uint32_t>(need_lists_.size()) - n.matches_at;
    n.pool_at = static_cast<uint32_t>(need_lists_.size());
    for (uint32_t k = n.matches_at; k < n.pool_at; ++k) {
      FactId f = need_lists_[k];
      if (is_local(f)) continue;
      if (std::binary_search(ic.provided.begin(), ic.provided.end(), f)) n.self_provided = true;
      for (ComponentIndex p : index_.providers(f))
        if (p != c) need_lists_.push_back(p);
    }
    auto first = need_lists_.begin() + n.pool_at;
    std::sort(first, need_lists_.end());
    need_lists_.erase(std::unique(first, need_lists_.end()), need_lists_.end());
    n.pool_size = static_cast<uint32_t>(need_lists_.size()) - n.pool_at;
    needs_.push_back(std::move(n));
  }
}

std::optional<AddFailure> Selection::settle() {
  while (!pending_.empty()) {
    std::pop_heap(pending_.begin(), pending_.end(), std::greater<>());
    ComponentIndex p = pending_.back();
    pending_.pop_back();
    if (chosen_[p] || banned_[p] || unmet_applies_[p] != 0) continue;
    if (auto why = incompatibility(p)) return AddFailure{std::move(*why), p};
    Choice choice;
    choice.component = p;
    choice.rule = ChoiceRule::AppliesTo;
    add_one(std::move(choice));
  }
  return std::nullopt;
}

std::optional<AddFailure> Selection::add(Choice choice) {
  size_t before = mark();
  ComponentIndex c = choice.component;
  if (!chosen_[c]) {
    if (auto why = incompatibility(c)) return AddFailure{std::move(*why), c};
    add_one(std::move(choice));
  }
  if (auto failure = settle()) {
    undo(before);
    return failure;
  }
  return std::nullopt;
}

uint32_t Selection::add_obligation_need(uint32_t obligation, std::string what, ComponentKind kind,
                                        std::vector<ComponentIndex> pool) {
  Need n;
  n.kind = Need::Kind::ObligationComponent;
  n.entry = obligation;
  n.what = std::move(what);
  n.needed_kind = kind;
  n.pool_at = static_cast<uint32_t>(need_lists_.size());
  n.pool_size = static_cast<uint32_t>(pool.size());
  need_lists_.insert(need_lists_.end(), pool.begin(), pool.end());
  needs_.push_back(std::move(n));
  return static_cast<uint32_t>(needs_.size() - 1);
}

bool Selection::satisfied(uint32_t need) const {
  const Need &n = needs_[need];
  if (n.kind == Need::Kind::ObligationComponent) {
    std::span<const ComponentIndex> candidates = need_pool(n);
    return std::any_of(candidates.begin(), candidates.end(),
                       [&](ComponentIndex c) { return chosen_[c] != 0; });
  }
  // A fact holds for the need when someone other than its owner makes it hold: the owner's own
  // provision is discounted, and only looked up when the owner provides a matching fact at all.
  for (FactId f : need_facts(n)) {
    uint32_t k = count_[f];
    if (k > 0 && n.self_provided && !is_local(f)) {
      std::span<const FactId> own = index_.at(n.owner).provided;
      if (std::binary_search(own.begin(), own.end(), f)) --k;
    }
    if (k > 0) return true;
  }
  return false;
}

std::optional<std::string> Selection::not_selectable(ComponentIndex c) const {
  const ComponentKind kind = index_.at(c).kind;
  switch (kind) {
  case ComponentKind::Backend:
  case ComponentKind::Binding:
  case ComponentKind::Pipeline:
    return std::string("a ") + component_kind_name(kind) +
           " is chosen for the target, never to satisfy a requirement";
  case ComponentKind::Pass:
    if (!auto_apply_) return std::string("it is not in the explicit pass list");
    return std::nullopt;
  default: return std::nullopt;
  }
}

std::vector<ComponentIndex> Selection::viable(uint32_t need, std::vector<Alternative> *rejected) const {
  std::vector<ComponentIndex> out;
  for (ComponentIndex c : need_pool(needs_[need])) {
    if (chosen_[c]) continue;
    if (auto why = not_selectable(c)) {
      if (rejected) rejected->push_back({c, *why});
      continue;
    }
    if (banned_[c]) {
      if (rejected) rejected->push_back({c, "it was already reported as not composing"});
      continue;
    }
    if (auto why = incompatibility(c)) {
      if (rejected) rejected->push_back({c, why->message});
      continue;
    }
    out.push_back(c);
  }
  return out;
}

void Selection::undo(size_t to) {
  while (trail_.size() > to) {
    TrailEntry e = trail_.back();
    trail_.pop_back();
    for (FactId f : index_.at(e.component).provided)
      decrement(f);
    chosen_[e.component] = 0;
    order_.pop_back();
    choices_.pop_back();
    needs_.resize(e.needs_before);
    need_lists_.resize(e.need_lists_before);
  }
  // What applied at the mark and is not chosen (e.g. applying only to local facts) is pending again.
  pending_.clear();
  if (!auto_apply_) return;
  for (ComponentIndex c : index_.of_kind(ComponentKind::Pass))
    if (unmet_applies_[c] == 0 && !chosen_[c] && !banned_[c]) pending_.push_back(c);
  std::make_heap(pending_.begin(), pending_.end(), std::greater<>());
}

} // namespace htp
