#include "resolver/plan_dot.hpp"

#include <map>
#include <set>
#include <sstream>

#include <htp/capability.hpp>

namespace htp {

namespace {

/// A DOT double-quoted string.
std::string dot_string(const std::string &s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out + "\"";
}

/// At most `limit` bytes, cut at a UTF-8 character boundary, with "..." when cut.
std::string shortened(const std::string &s, size_t limit) {
  if (s.size() <= limit) return s;
  size_t cut = limit - 3;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80)
    --cut;
  return s.substr(0, cut) + "...";
}

/// Canonical text when it parses, the text as written otherwise.
std::string canonical(const std::string &text, CapabilityMode mode) {
  auto c = parse_capability(text, mode);
  return c ? to_string(*c) : text;
}

} // namespace

std::string plan_to_dot(const Plan &plan) {
  std::ostringstream os;
  os << "digraph htp_plan {\n";
  os << "  graph [rankdir=LR, label=" << dot_string("HTP plan for target " + plan.target)
     << ", labelloc=t];\n";
  os << "  node [fontname=\"Helvetica\", fontsize=10];\n";
  os << "  edge [fontname=\"Helvetica\", fontsize=8];\n";

  std::map<std::string, std::string> component_node; // id -> node name
  for (size_t i = 0; i < plan.components.size(); ++i)
    component_node[plan.components[i]->id] = "c" + std::to_string(i);
  std::map<std::string, std::string> fact_node, requirement_node;
  std::vector<std::pair<std::string, Capability>> facts; // node, parsed
  auto fact = [&](const std::string &text) -> std::string {
    std::string key = canonical(text, CapabilityMode::Fact);
    auto [it, inserted] = fact_node.try_emplace(key, "f" + std::to_string(fact_node.size()));
    if (inserted) {
      os << "  " << it->second
         << " [shape=ellipse, style=filled, fillcolor=\"#eef6ee\", label=" << dot_string(key) << "];\n";
      if (auto c = parse_capability(key, CapabilityMode::Fact)) facts.emplace_back(it->second, *c);
    }
    return it->second;
  };

  // Components.
  for (size_t i = 0; i < plan.components.size(); ++i) {
    const Component &c = *plan.components[i];
    std::string label = std::string(component_kind_name(c.kind)) + "\n" + c.id + " " + c.version;
    if (c.kind == ComponentKind::Pass) label += "\n[" + std::string(pass_stage_name(c.stage)) + "]";
    os << "  c" << i
       << " [shape=box, style=\"rounded,filled\", fillcolor=\"#dde8f8\", label=" << dot_string(label)
       << "];\n";
  }
  // Provided capabilities.
  for (size_t i = 0; i < plan.components.size(); ++i)
    for (const std::string &p : plan.components[i]->provides) {
      std::string node = fact(p);
      os << "  c" << i << " -> " << node << " [label=\"provides\"];\n";
    }
  // Obligations.
  for (size_t i = 0; i < plan.obligations.size(); ++i) {
    const PlannedObligation &o = plan.obligations[i];
    std::string f = fact(to_string(o.obligation.capability));
    os << "  o" << i << " [shape=note, style=filled, fillcolor=\"#fff4d6\", label="
       << dot_string("program uses\n" + o.obligation.display()) << "];\n";
    os << "  o" << i << " -> " << f << " [label=\"raises\"];\n";
    for (const std::string &a : o.accepted_by)
      if (auto it = component_node.find(a); it != component_node.end())
        os << "  " << f << " -> " << it->second << " [style=dotted, label=\"accepted by\"];\n";
  }
  // Requirements, linked to the facts that satisfy them.
  for (size_t i = 0; i < plan.components.size(); ++i)
    for (const std::string &r : plan.components[i]->requires_) {
      std::string key = canonical(r, CapabilityMode::Requirement);
      auto [it, inserted] = requirement_node.try_emplace(key, "r" + std::to_string(requirement_node.size()));
      if (inserted) {
        os << "  " << it->second << " [shape=ellipse, style=dashed, label=" << dot_string(key) << "];\n";
        if (auto req = parse_capability(key, CapabilityMode::Requirement))
          for (const auto &[node, f] : facts)
            if (matches(*req, f))
              os << "  " << node << " -> " << it->second << " [style=dashed, label=\"satisfies\"];\n";
      }
      os << "  " << it->second << " -> c" << i << " [style=dashed, label=\"required by\"];\n";
    }
  // Facts that made passes apply.
  for (size_t i = 0; i < plan.components.size(); ++i)
    for (const std::string &a : plan.components[i]->applies_to)
      if (auto pattern = parse_capability(a, CapabilityMode::Requirement))
        for (const auto &[node, f] : facts)
          if (matches(*pattern, f))
            os << "  " << node << " -> c" << i << " [style=dotted, label=\"applies\"];\n";
  // Pass order.
  for (size_t i = 0; i + 1 < plan.passes.size(); ++i) {
    auto a = component_node.find(plan.passes[i].component->id);
    auto b = component_node.find(plan.passes[i + 1].component->id);
    if (a != component_node.end() && b != component_node.end())
      os << "  " << a->second << " -> " << b->second << " [color=\"#1f5fbf\", penwidth=2, label="
         << dot_string("runs before (" + std::to_string(i + 1) + ")") << "];\n";
  }
  // Components the program or the pipeline template brought in.
  for (const Derivation &d : plan.derivation) {
    auto chosen = component_node.find(d.component);
    if (chosen == component_node.end()) continue;
    if (d.rule == "pipeline-template" && plan.pipeline)
      os << "  " << component_node[plan.pipeline->id] << " -> " << chosen->second
         << " [style=dotted, label=\"lists\"];\n";
    if (d.rule == "obligation")
      for (size_t i = 0; i < plan.obligations.size(); ++i)
        if (to_string(plan.obligations[i].obligation.capability) == d.requirement &&
            plan.obligations[i].obligation.display() == d.required_by)
          os << "  o" << i << " -> " << chosen->second << " [style=dotted, label=\"needs\"];\n";
  }
  // Alternatives that were not chosen.
  std::set<std::string> alt_done;
  size_t alt_count = 0;
  for (const Derivation &d : plan.derivation) {
    auto chosen = component_node.find(d.component);
    if (chosen == component_node.end()) continue;
    for (const PlanAlternative &a : d.alternatives) {
      if (component_node.count(a.id)) continue;
      std::string node = "a" + std::to_string(alt_count);
      if (alt_done.insert(a.id).second) {
        os << "  " << node << " [shape=box, style=\"rounded,dashed\", color=gray50, fontcolor=gray40, label="
           << dot_string(a.kind + "\n" + a.id + "\n(not chosen)") << "];\n";
        ++alt_count;
      } else {
        continue;
      }
      os << "  " << node << " -> " << chosen->second
         << " [style=dotted, color=gray50, label=" << dot_string(shortened(a.verdict, 60)) << "];\n";
    }
  }
  os << "}\n";
  return os.str();
}

} // namespace htp
