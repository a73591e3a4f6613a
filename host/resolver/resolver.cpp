#include "resolver/resolver.hpp"

#include <algorithm>
#include <set>
#include <unordered_set>

#include "resolver/explanation.hpp"
#include "resolver/pass_schedule.hpp"
#include "resolver/selection.hpp"
#include "resolver/unloaded_catalog.hpp"

namespace htp {

Capability target_fact(const std::string &target) {
  Capability c;
  c.ns = "Target";
  c.name = "Selected";
  c.params.push_back({"name", target});
  return c;
}

namespace {


std::string span_text(const Span &span) {
  if (!span.known()) return {};
  std::string s = span.file.empty() ? std::string() : span.file + ":";
  return s + std::to_string(span.line) + ":" + std::to_string(span.col + 1);
}

/// One resolution: the request, the selection being built and the diagnostics found.
class ResolveRun {
public:
  ResolveRun(const CapabilityIndex &index, const ResolveRequest &request, const ResolveOptions &options)
      : ix_(index), req_(request), opt_(options), unloaded_(request.known_unloaded) {}

  Resolution run();

private:
  void report(Diagnostic d);
  bool stopped() const { return errors_ >= opt_.max_errors; }
  std::optional<Choice> choose_for_target(ComponentKind kind, const std::optional<std::string> &pick,
                                          const char *flag);
  std::optional<Choice> choose_pipeline(const std::optional<Choice> &backend, const std::optional<ComponentIndex> &named);
  void settle_reporting();
  void seed(const Choice &choice);
  std::optional<ComponentIndex> pass_by_id(const std::string &id, const std::string &listed_by);
  void add_obligation_needs();
  bool solve(std::vector<uint32_t> open, int depth);
  uint64_t need_key(uint32_t need) const;
  void check_acceptance(std::vector<PlannedObligation> &out);
  void note_optional_unmet(std::vector<std::string> &notes);
  Plan build_plan(PassSchedule schedule, std::vector<PlannedObligation> obligations,
                  std::vector<std::string> notes);
  Derivation derive(const Choice &choice) const;
  const Component &comp(ComponentIndex c) const { return *ix_.at(c).component; }

  const CapabilityIndex &ix_;
  const ResolveRequest &req_;
  const ResolveOptions &opt_;
  UnloadedCatalog unloaded_;
  DiagnosticList diags_;
  size_t errors_ = 0;
  std::set<std::string> reported_;
  std::optional<Selection> sel_;
  std::unordered_set<uint64_t> abandoned_;
  uint32_t backtracks_ = 0;
  std::optional<Diagnostic> failure_;
  std::optional<std::vector<ComponentIndex>> explicit_order_;
};

void ResolveRun::report(Diagnostic d) {
  std::string key = d.code + "\n" + d.message;
  if (!reported_.insert(key).second) return;
  if (d.severity == Severity::Error) ++errors_;
  diags_.report(std::move(d));
}

std::optional<Choice>
ResolveRun::choose_for_target(ComponentKind kind, const std::optional<std::string> &pick, const char *flag) {
  const std::string kind_name = component_kind_name(kind);
  std::vector<ComponentIndex> claim = ix_.claiming(kind, req_.target);
  auto ids = [&](const std::vector<ComponentIndex> &cs) {
    std::vector<std::string> out;
    for (ComponentIndex c : cs)
      out.push_back("'" + comp(c).id + "'");
    return join_text(out);
  };
  Choice choice;
  choice.rule = kind == ComponentKind::Backend ? ChoiceRule::TargetBackend : ChoiceRule::TargetBinding;
  if (pick) {
    auto c = ix_.find(*pick);
    if (!c || comp(*c).kind != kind) {
      Diagnostic d = Diagnostic::error("resolve.unknown-pick",
                                       std::string(flag) + " '" + *pick + "' is not a loaded " + kind_name);
      d.with_note(kind_name + "s for target " + req_.target + ": " + (claim.empty() ? "none" : ids(claim)));
      for (const auto &h : unloaded_.with_id(*pick))
        d.with_note(h);
      report(std::move(d));
      return std::nullopt;
    }
    if (std::find(claim.begin(), claim.end(), *c) == claim.end()) {
      Diagnostic d = Diagnostic::error("resolve.pick-target", kind_name + " '" + *pick + "' (" + flag +
                                                                  ") does not support target " + req_.target);
      d.with_note("it supports: " + join_text(comp(*c).targets));
      d.with_note(kind_name + "s for target " + req_.target + ": " + (claim.empty() ? "none" : ids(claim)));
      report(std::move(d));
      return std::nullopt;
    }
    choice.component = *c;
    choice.because = "picked by the user with " + std::string(flag) + " for target " + req_.target;
    for (ComponentIndex o : claim)
      if (o != *c) choice.alternatives.push_back({o, "not picked (" + std::string(flag) + " " + *pick + ")"});
    return choice;
  }
  if (claim.empty()) {
    Diagnostic d = Diagnostic::error("resolve.no-" + kind_name,
                                     "no loaded " + kind_name + " supports target " + req_.target);
    for (const auto &h : unloaded_.claiming(req_.target))
      if (h.rfind(kind_name + " ", 0) == 0) d.with_note(h);
    report(std::move(d));
    return std::nullopt;
  }
  int32_t best = INT32_MIN;
  for (ComponentIndex c : claim)
    best = std::max(best, comp(c).priority);
  std::vector<ComponentIndex> top;
  for (ComponentIndex c : claim)
    if (comp(c).priority == best) top.push_back(c);
  if (top.size() > 1) {
    Diagnostic d =
        Diagnostic::error("resolve.ambiguous-" + kind_name,
                          kind_name + "s " + ids(top) + " all support target " + req_.target +
                              " with priority " + std::to_string(best) + "; pick one with " + flag);
    for (ComponentIndex c : top)
      d.with_note(describe_component(comp(c)));
    report(std::move(d));
    return std::nullopt;
  }
  choice.component = top.front();
  choice.because = claim.size() == 1 ? "the only " + kind_name + " supporting target " + req_.target
                                     : "the highest-priority " + kind_name + " (" + std::to_string(best) +
                                           ") supporting target " + req_.target;
  for (ComponentIndex o : claim)
    if (o != choice.component)
      choice.alternatives.push_back(
          {o, "lower priority (" + std::to_string(comp(o).priority) + " < " + std::to_string(best) + ")"});
  return choice;
}

std::optional<Choice> ResolveRun::choose_pipeline(const std::optional<Choice> &backend,
                                                  const std::optional<ComponentIndex> &named) {
  std::vector<ComponentIndex> claim = ix_.claiming(ComponentKind::Pipeline, req_.target);
  Choice choice;
  choice.rule = ChoiceRule::TargetPipeline;
  if (named) {
    // A pipeline selected by name (a pass list of one pipeline id): it must claim the target.
    if (std::find(claim.begin(), claim.end(), *named) == claim.end()) {
      Diagnostic d = Diagnostic::error("resolve.pipeline-target", "pipeline '" + comp(*named).id +
                                                                      "' does not target " + req_.target);
      d.with_note(describe_component(comp(*named)));
      report(std::move(d));
      return std::nullopt;
    }
    choice.component = *named;
    choice.because = "selected by name";
    for (ComponentIndex o : claim)
      if (o != choice.component) choice.alternatives.push_back({o, "not the pipeline asked for"});
    return choice;
  }
  if (claim.empty()) return std::nullopt;
  std::vector<ComponentIndex> pick = claim;
  if (claim.size() > 1 && backend) {
    // Several templates: the one shipped with the chosen backend's plugin.
    const std::string &plugin = comp(backend->component).plugin.name;
    std::vector<ComponentIndex> same;
    for (ComponentIndex c : claim)
      if (comp(c).plugin.name == plugin) same.push_back(c);
    if (!same.empty()) pick = same;
  }
  if (pick.size() > 1) {
    std::vector<std::string> ids;
    for (ComponentIndex c : pick)
      ids.push_back("'" + comp(c).id + "'");
    Diagnostic d = Diagnostic::error("resolve.ambiguous-pipeline",
                                     "pipelines " + join_text(ids) + " all target " + req_.target +
                                         "; pass an explicit pass list instead");
    for (ComponentIndex c : pick)
      d.with_note(describe_component(comp(c)));
    report(std::move(d));
    return std::nullopt;
  }
  choice.component = pick.front();
  choice.because = claim.size() == 1 ? "the only pipeline template for target " + req_.target
                                     : "the pipeline template for target " + req_.target +
                                           " from the chosen backend's plugin";
  for (ComponentIndex o : claim)
    if (o != choice.component)
      choice.alternatives.push_back({o, "from another plugin than the chosen backend"});
  return choice;
}

void ResolveRun::settle_reporting() {
  while (auto failure = sel_->settle()) {
    report(std::move(failure->diagnostic));
    sel_->ban(failure->culprit);
  }
}

void ResolveRun::seed(const Choice &choice) {
  while (!stopped()) {
    auto failure = sel_->add(choice);
    if (!failure) return;
    report(std::move(failure->diagnostic));
    if (failure->culprit == choice.component) return;
    sel_->ban(failure->culprit);
  }
}

std::optional<ComponentIndex> ResolveRun::pass_by_id(const std::string &id, const std::string &listed_by) {
  auto c = ix_.find(id);
  if (c && comp(*c).kind == ComponentKind::Pass && !ix_.at(*c).malformed) return c;
  Diagnostic d = Diagnostic::error("resolve.unknown-pass",
                                   listed_by + " lists pass '" + id + "', " +
                                       (c ? "which is a " + std::string(component_kind_name(comp(*c).kind))
                                          : std::string("which is not loaded")));
  for (const auto &h : unloaded_.with_id(id))
    d.with_note(h);
  report(std::move(d));
  return std::nullopt;
}

void ResolveRun::add_obligation_needs() {
  for (uint32_t i = 0; i < req_.obligations.size(); ++i) {
    const Capability &cap = req_.obligations[i].capability;
    if (cap.ns != "Uses") continue;
    ComponentKind kind;
    const char *key;
    const char *member = nullptr;
    if (cap.name == "Dialect")
      kind = ComponentKind::Dialect, key = "name";
    else if (cap.name == "Intrinsic")
      kind = ComponentKind::IntrinsicSet, key = "set", member = "op";
    else if (cap.name == "Layout")
      kind = ComponentKind::Layout, key = "kind", member = "facet";
    else
      continue;
    const auto *v = cap.find(key);
    const auto *name = v ? std::get_if<std::string>(v) : nullptr;
    if (!name) continue;
    const auto *mv = member ? cap.find(member) : nullptr;
    const auto *member_name = mv ? std::get_if<std::string>(mv) : nullptr;
    std::vector<ComponentIndex> pool;
    for (ComponentIndex c : ix_.named(kind, *name)) {
      const Component &k = comp(c);
      if (ix_.at(c).malformed) continue;
      if (member_name && !k.names.empty() &&
          std::find(k.names.begin(), k.names.end(), *member_name) == k.names.end())
        continue;
      pool.push_back(c);
    }
    std::string what = std::string(component_kind_name(kind)) + " '" + *name + "'";
    if (member_name) what += " with " + std::string(member) + " '" + *member_name + "'";
    sel_->add_obligation_need(i, std::move(what), kind, std::move(pool));
  }
}

uint64_t ResolveRun::need_key(uint32_t need) const {
  const Need &n = sel_->needs()[need];
  if (n.kind == Need::Kind::ObligationComponent) return (uint64_t{1} << 63) | n.entry;
  return (static_cast<uint64_t>(n.owner) << 32) | n.entry;
}

bool ResolveRun::solve(std::vector<uint32_t> open, int depth) {
  Selection &s = *sel_;
  const bool top = depth == 0;
  while (!stopped()) {
    // One wave: drop what holds, take every forced choice, remember the tightest open need.
    std::vector<uint32_t> kept;
    bool progress = false;
    int64_t best = -1;
    size_t best_count = SIZE_MAX;
    for (size_t i = 0; i < open.size() && !stopped(); ++i) {
      uint32_t n = open[i];
      if (s.satisfied(n) || (top && abandoned_.count(need_key(n)))) continue;
      std::vector<ComponentIndex> v = s.viable(n, nullptr);
      if (v.size() > 1) {
        kept.push_back(n);
        if (v.size() < best_count) best = n, best_count = v.size();
        continue;
      }
      std::vector<Alternative> rejected;
      if (s.need_pool(s.needs()[n]).size() > 1 || v.empty()) s.viable(n, &rejected);
      if (v.empty()) {
        Diagnostic d = explain_unmet(s, n, req_.obligations, rejected, {}, unloaded_);
        if (!top) {
          failure_ = std::move(d);
          return false;
        }
        report(std::move(d));
        abandoned_.insert(need_key(n));
        continue;
      }
      Choice choice;
      choice.component = v.front();
      choice.rule =
          s.needs()[n].kind == Need::Kind::Requirement ? ChoiceRule::Requirement : ChoiceRule::Obligation;
      choice.need = static_cast<int32_t>(n);
      choice.alternatives = std::move(rejected);
      size_t before = s.needs().size();
      if (auto f = s.add(std::move(choice))) {
        if (!top) {
          failure_ = std::move(f->diagnostic);
          return false;
        }
        report(std::move(f->diagnostic));
        if (f->culprit == v.front())
          abandoned_.insert(need_key(n));
        else
          s.ban(f->culprit);
        --i; // retry this need without the banned pass
        continue;
      }
      progress = true;
      for (size_t k = before; k < s.needs().size(); ++k)
        open.push_back(static_cast<uint32_t>(k));
    }
    open = std::move(kept);
    if (open.empty()) return true;
    if (progress) continue;

    // No forced choice left: branch on the need with the fewest candidates, in ascending id order.
    auto n = static_cast<uint32_t>(best);
    std::vector<Alternative> rejected;
    std::vector<ComponentIndex> candidates = s.viable(n, &rejected);
    std::vector<Alternative> failed;
    for (size_t k = 0; k < candidates.size(); ++k) {
      if (backtracks_ >= opt_.max_backtracks) {
        failed.push_back({candidates[k], "not tried: the search gave up after " +
                                             std::to_string(opt_.max_backtracks) + " backtracks"});
        continue;
      }
      size_t m = s.mark();
      Choice choice;
      choice.component = candidates[k];
      choice.rule =
          s.needs()[n].kind == Need::Kind::Requirement ? ChoiceRule::Requirement : ChoiceRule::Obligation;
      choice.need = static_cast<int32_t>(n);
      for (size_t j = 0; j < k; ++j)
        choice.alternatives.push_back(failed[j]);
      for (size_t j = k + 1; j < candidates.size(); ++j)
        choice.alternatives.push_back(
            {candidates[j], "also fits; candidates are tried in ascending id order and '" +
                                comp(candidates[k]).id + "' succeeded first"});
      for (const Alternative &r : rejected)
        choice.alternatives.push_back(r);
      size_t before = s.needs().size();
      if (auto f = s.add(std::move(choice))) {
        failed.push_back({candidates[k], f->diagnostic.message});
        ++backtracks_;
        continue;
      }
      std::vector<uint32_t> next = open;
      for (size_t j = before; j < s.needs().size(); ++j)
        next.push_back(static_cast<uint32_t>(j));
      failure_.reset();
      if (solve(std::move(next), depth + 1)) return true;
      failed.push_back({candidates[k], failure_ ? failure_->message : std::string("the search failed")});
      s.undo(m);
      ++backtracks_;
    }
    Diagnostic d = explain_unmet(s, n, req_.obligations, rejected, failed, unloaded_);
    if (!top) {
      failure_ = std::move(d);
      return false;
    }
    report(std::move(d));
    abandoned_.insert(need_key(n));
    open.erase(std::find(open.begin(), open.end(), n));
  }
  return false;
}

void ResolveRun::check_acceptance(std::vector<PlannedObligation> &out) {
  for (const Obligation &o : req_.obligations) {
    PlannedObligation po{o, {}};
    for (const PatternRef &ref : ix_.acceptors_matching(o.capability))
      if (sel_->chosen(ref.component)) po.accepted_by.push_back(comp(ref.component).id);
    std::sort(po.accepted_by.begin(), po.accepted_by.end());
    po.accepted_by.erase(std::unique(po.accepted_by.begin(), po.accepted_by.end()), po.accepted_by.end());
    if (po.accepted_by.empty()) report(explain_unaccepted(*sel_, o, req_.target, unloaded_));
    out.push_back(std::move(po));
  }
}

void ResolveRun::note_optional_unmet(std::vector<std::string> &notes) {
  std::vector<ComponentIndex> chosen = sel_->chosen_in_order();
  std::sort(chosen.begin(), chosen.end());
  for (ComponentIndex c : chosen) {
    const IndexedComponent &ic = ix_.at(c);
    for (const Capability &r : ic.requires_) {
      if (!r.optional) continue;
      bool holds = false;
      for (FactId f : sel_->matching(r)) {
        uint32_t k = sel_->count(f);
        if (k > 0 && !sel_->is_local(f) && std::binary_search(ic.provided.begin(), ic.provided.end(), f)) --k;
        if (k > 0) holds = true;
      }
      if (!holds)
        notes.push_back("optional requirement " + to_string(r) + " of " + describe_component(comp(c)) +
                        " is not met; it runs without it");
    }
  }
}

Derivation ResolveRun::derive(const Choice &choice) const {
  const Component &c = comp(choice.component);
  Derivation d;
  d.component = c.id;
  d.kind = component_kind_name(c.kind);
  d.rule = choice_rule_name(choice.rule);
  d.because = choice.because;
  switch (choice.rule) {
  case ChoiceRule::TargetBackend:
  case ChoiceRule::TargetBinding:
  case ChoiceRule::TargetPipeline: d.required_by = "target " + req_.target; break;
  case ChoiceRule::PipelineTemplate:
  case ChoiceRule::ExplicitPassList:
    d.required_by = choice.because;
    d.because = "listed by " + choice.because;
    break;
  case ChoiceRule::AppliesTo: {
    std::vector<std::string> parts;
    const CapabilityList &applies_to = ix_.at(choice.component).applies_to;
    for (uint32_t e = 0; e < applies_to.size(); ++e) {
      const Capability &pattern = applies_to[e];
      if (pattern.optional) continue;
      std::string part = to_string(pattern);
      for (FactId f : sel_->applies_to_matches(choice.component, e))
        if (sel_->count(f) > 0) {
          part += " holds as " + std::string(sel_->fact_text(f)) + " from " + sel_->source_of(f);
          break;
        }
      parts.push_back(std::move(part));
    }
    d.because = "applies: " + join_text(parts, "; ");
    break;
  }
  case ChoiceRule::Requirement: {
    const Need &n = sel_->needs()[static_cast<size_t>(choice.need)];
    const Capability &r = ix_.at(n.owner).requires_[n.entry];
    d.requirement = to_string(r);
    d.required_by = comp(n.owner).id;
    std::string provides;
    for (const Capability &p : ix_.at(choice.component).provides)
      if (matches(r, p)) {
        provides = to_string(p);
        break;
      }
    d.because = "provides " + provides + ", which " + describe_component(comp(n.owner)) + " requires as " +
                d.requirement;
    break;
  }
  case ChoiceRule::Obligation: {
    const Need &n = sel_->needs()[static_cast<size_t>(choice.need)];
    const Obligation &o = req_.obligations[n.entry];
    d.requirement = to_string(o.capability);
    d.required_by = o.display();
    d.span = o.span;
    std::string at = span_text(o.span);
    d.because =
        "the program uses " + o.display() + (at.empty() ? "" : " at " + at) + ", which needs " + n.what;
    break;
  }
  }
  for (const Alternative &a : choice.alternatives) {
    const Component &ac = comp(a.component);
    d.alternatives.push_back({ac.id, component_kind_name(ac.kind), a.verdict});
  }
  return d;
}

Plan ResolveRun::build_plan(PassSchedule schedule, std::vector<PlannedObligation> obligations,
                            std::vector<std::string> notes) {
  Plan plan;
  plan.target = req_.target;
  plan.obligations = std::move(obligations);
  std::vector<ComponentIndex> chosen = sel_->chosen_in_order();
  std::sort(chosen.begin(), chosen.end(), [&](ComponentIndex a, ComponentIndex b) {
    return ix_.at(a).kind != ix_.at(b).kind ? ix_.at(a).kind < ix_.at(b).kind : a < b;
  });
  for (ComponentIndex c : chosen)
    plan.components.push_back(&comp(c));
  plan.derivation.reserve(sel_->choices().size());
  for (const Choice &ch : sel_->choices()) {
    if (ch.rule == ChoiceRule::TargetBackend) plan.backend = &comp(ch.component);
    if (ch.rule == ChoiceRule::TargetBinding) plan.binding = &comp(ch.component);
    if (ch.rule == ChoiceRule::TargetPipeline) plan.pipeline = &comp(ch.component);
    plan.derivation.push_back(derive(ch));
  }
  plan.initial_facts = std::move(schedule.initial_facts);
  plan.passes = std::move(schedule.passes);
  plan.notes = std::move(notes);
  return plan;
}

Resolution ResolveRun::run() {
  for (const Diagnostic &d : ix_.diagnostics().items())
    report(d);

  // The target must be known to some backend, binding or pipeline.
  std::vector<std::string> known = ix_.targets();
  if (std::find(known.begin(), known.end(), req_.target) == known.end()) {
    Diagnostic d =
        Diagnostic::error("resolve.unknown-target",
                          "unknown target '" + req_.target + "'; known targets: " +
                              (known.empty() ? std::string("none (no backend is loaded)") : join_text(known)));
    for (const auto &h : unloaded_.claiming(req_.target))
      d.with_note(h);
    report(std::move(d));
    return Resolution{std::nullopt, std::move(diags_)};
  }

  std::optional<Choice> backend = choose_for_target(ComponentKind::Backend, req_.backend, "--backend");
  std::optional<Choice> binding = choose_for_target(ComponentKind::Binding, req_.binding, "--binding");
  // Without a backend (its choice failed, and said why) nothing accepts the program's obligations and no
  // pass's Backend.* requirement is met: a resolve.unaccepted per line of the program and an unmet error per
  // emit pass would bury the reason.
  if (!backend) return Resolution{std::nullopt, std::move(diags_)};
  std::optional<Choice> pipeline;
  // A pass list of one id naming a pipeline selects that pipeline template instead of listing passes.
  std::optional<ComponentIndex> named;
  if (req_.passes && req_.passes->size() == 1)
    if (auto c = ix_.find(req_.passes->front()); c && comp(*c).kind == ComponentKind::Pipeline) named = c;
  const bool explicit_passes = req_.passes && !named;
  if (!explicit_passes) pipeline = choose_pipeline(backend, named);

  std::vector<LocalFact> locals;
  for (const Obligation &o : req_.obligations) {
    std::string at = span_text(o.span);
    locals.push_back({o.capability, "the program" + (at.empty() ? std::string() : " (" + at + ")")});
  }
  locals.push_back({target_fact(req_.target), "the target"});
  sel_.emplace(ix_, std::move(locals), !explicit_passes);

  if (backend) seed(*backend);
  if (binding) seed(*binding);
  if (pipeline) {
    seed(*pipeline);
    const Component &p = comp(pipeline->component);
    for (const std::string &id : p.passes)
      if (auto c = pass_by_id(id, "pipeline '" + p.id + "'")) {
        Choice ch;
        ch.component = *c;
        ch.rule = ChoiceRule::PipelineTemplate;
        ch.because = "pipeline '" + p.id + "'";
        seed(std::move(ch));
      }
  }
  if (explicit_passes) {
    explicit_order_.emplace();
    std::set<std::string> seen;
    for (const std::string &id : *req_.passes) {
      if (!seen.insert(id).second) {
        report(Diagnostic::error("resolve.duplicate-pass",
                                 "the explicit pass list names pass '" + id + "' twice"));
        continue;
      }
      if (auto c = pass_by_id(id, "the explicit pass list")) {
        Choice ch;
        ch.component = *c;
        ch.rule = ChoiceRule::ExplicitPassList;
        ch.because = "the explicit pass list";
        seed(std::move(ch));
        if (sel_->chosen(*c)) explicit_order_->push_back(*c);
      }
    }
  }

  settle_reporting(); // passes that apply to the obligations alone, when no seed settled them
  add_obligation_needs();
  std::vector<uint32_t> open(sel_->needs().size());
  for (uint32_t i = 0; i < open.size(); ++i)
    open[i] = i;
  solve(std::move(open), 0);

  std::vector<PlannedObligation> obligations;
  check_acceptance(obligations);
  std::vector<std::string> notes;
  note_optional_unmet(notes);
  if (diags_.has_errors()) return Resolution{std::nullopt, std::move(diags_)};

  PassSchedule schedule = schedule_passes(*sel_, explicit_order_, diags_);
  if (diags_.has_errors()) return Resolution{std::nullopt, std::move(diags_)};
  // Unmet optional requirements are not news: they stay in the plan (resolve --explain, plan JSON), not
  // among the diagnostics every compile prints.
  Plan plan = build_plan(std::move(schedule), std::move(obligations), std::move(notes));
  return Resolution{std::move(plan), std::move(diags_)};
}

} // namespace

Resolver::Resolver(const Registry &registry, ResolveOptions options) : index_(registry), options_(options) {}

Resolution Resolver::resolve(const ResolveRequest &request) const {
  ResolveRun run(index_, request, options_);
  return run.run();
}

Resolution resolve(const Registry &registry, const ResolveRequest &request, ResolveOptions options) {
  return Resolver(registry, options).resolve(request);
}

} // namespace htp
