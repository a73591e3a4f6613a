#include "resolver/plan.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace htp {


std::vector<std::string> Plan::facts_after(size_t index) const {
  std::set<std::string> facts(initial_facts.begin(), initial_facts.end());
  for (size_t i = 0; i <= index && i < passes.size(); ++i) {
    for (const auto &f : passes[i].removed)
      facts.erase(f);
    for (const auto &f : passes[i].added)
      facts.insert(f);
  }
  return {facts.begin(), facts.end()};
}

std::vector<PluginRef> Plan::plugins() const {
  std::map<std::string, PluginRef> by_name;
  for (const Component *c : components)
    by_name.emplace(c->plugin.name, c->plugin);
  std::vector<PluginRef> out;
  for (auto &[name, ref] : by_name)
    out.push_back(ref);
  return out;
}

namespace {

nlohmann::ordered_json component_ref(const Component *c) {
  if (!c) return nullptr;
  return c->id;
}

nlohmann::ordered_json component_json(const Component &c) {
  nlohmann::ordered_json j;
  j["kind"] = component_kind_name(c.kind);
  j["id"] = c.id;
  j["version"] = c.version;
  j["plugin"] = {{"name", c.plugin.name}, {"version", c.plugin.version}, {"sha256", c.plugin.sha256}};
  return j;
}

} // namespace

nlohmann::ordered_json Plan::to_json() const {
  nlohmann::ordered_json j;
  j["schema"] = kPlanSchema;
  j["target"] = target;
  j["backend"] = component_ref(backend);
  j["binding"] = component_ref(binding);
  j["pipeline"] = component_ref(pipeline);

  auto &obs = j["obligations"] = nlohmann::ordered_json::array();
  for (const PlannedObligation &o : obligations) {
    nlohmann::ordered_json oj;
    oj["capability"] = to_string(o.obligation.capability);
    oj["label"] = o.obligation.display();
    oj["span"] = span_to_json(o.obligation.span);
    oj["accepted_by"] = o.accepted_by;
    obs.push_back(std::move(oj));
  }

  auto &comps = j["components"] = nlohmann::ordered_json::array();
  for (const Component *c : components)
    comps.push_back(component_json(*c));

  j["initial_facts"] = initial_facts;
  auto &ps = j["passes"] = nlohmann::ordered_json::array();
  std::set<std::string> facts(initial_facts.begin(), initial_facts.end());
  for (const PlannedPass &p : passes) {
    for (const auto &f : p.removed)
      facts.erase(f);
    for (const auto &f : p.added)
      facts.insert(f);
    nlohmann::ordered_json pj;
    pj["id"] = p.component->id;
    pj["version"] = p.component->version;
    pj["stage"] = pass_stage_name(p.component->stage);
    pj["plugin"] = p.component->plugin.name;
    auto &after = pj["after"] = nlohmann::ordered_json::array();
    for (const PassPredecessor &a : p.after)
      after.push_back({{"id", a.id}, {"reason", a.reason}});
    pj["added"] = p.added;
    pj["removed"] = p.removed;
    pj["facts_after"] = std::vector<std::string>(facts.begin(), facts.end());
    ps.push_back(std::move(pj));
  }

  auto &der = j["derivation"] = nlohmann::ordered_json::array();
  for (const Derivation &d : derivation) {
    nlohmann::ordered_json dj;
    dj["component"] = d.component;
    dj["kind"] = d.kind;
    dj["rule"] = d.rule;
    dj["because"] = d.because;
    dj["requirement"] =
        d.requirement.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.requirement);
    dj["required_by"] =
        d.required_by.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(d.required_by);
    dj["span"] = span_to_json(d.span);
    auto &alts = dj["alternatives"] = nlohmann::ordered_json::array();
    for (const PlanAlternative &a : d.alternatives)
      alts.push_back({{"id", a.id}, {"kind", a.kind}, {"verdict", a.verdict}});
    der.push_back(std::move(dj));
  }
  j["notes"] = notes;
  return j;
}

std::string Plan::to_json_text() const {
  return to_json().dump(2) + "\n";
}

std::string Plan::explain() const {
  std::ostringstream os;
  os << "target " << target << "\n";
  auto line = [&](const char *what, const Component *c) {
    os << "  " << what << ' ';
    if (c)
      os << c->id << ' ' << c->version << " (plugin " << c->plugin.name << ' ' << c->plugin.version << ")";
    else
      os << "(none)";
    os << '\n';
  };
  line("backend ", backend);
  line("binding ", binding);
  line("pipeline", pipeline);
  if (!obligations.empty()) {
    os << "obligations:\n";
    for (const PlannedObligation &o : obligations) {
      os << "  " << to_string(o.obligation.capability);
      if (!o.obligation.label.empty()) os << " (" << o.obligation.label << ")";
      os << " accepted by ";
      for (size_t i = 0; i < o.accepted_by.size(); ++i)
        os << (i ? ", " : "") << o.accepted_by[i];
      os << '\n';
    }
  }
  os << "passes:\n";
  for (size_t i = 0; i < passes.size(); ++i) {
    const PlannedPass &p = passes[i];
    os << "  " << (i + 1) << ". [" << pass_stage_name(p.component->stage) << "] " << p.component->id << ' '
       << p.component->version << '\n';
    for (const PassPredecessor &a : p.after)
      os << "       after " << a.id << ": " << a.reason << '\n';
    for (const auto &f : p.added)
      os << "       + " << f << '\n';
    for (const auto &f : p.removed)
      os << "       - " << f << '\n';
  }
  os << "derivation:\n";
  for (const Derivation &d : derivation) {
    os << "  " << d.kind << ' ' << d.component << " [" << d.rule << "]: " << d.because << '\n';
    for (const PlanAlternative &a : d.alternatives)
      os << "      instead of " << a.kind << ' ' << a.id << ": " << a.verdict << '\n';
  }
  if (!notes.empty()) {
    os << "notes:\n";
    for (const auto &n : notes)
      os << "  " << n << '\n';
  }
  return os.str();
}

} // namespace htp
