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
