#include "resolver/pass_schedule.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_map>

#include "resolver/pass_order.hpp"

namespace htp {

namespace {

/// The requirements of one pass with the facts each matches.
struct Consumer {
  uint32_t node;
  const Capability *requirement;
};

std::string stage_of(const Component &c) {
  return pass_stage_name(c.stage);
}

} // namespace

PassSchedule schedule_passes(const Selection &s,
                             const std::optional<std::vector<ComponentIndex>> &explicit_order,
                             DiagnosticList &diagnostics) {
  const CapabilityIndex &ix = s.index();
  PassSchedule out;

  // Nodes: chosen passes, ascending id (or the explicit order).
  std::vector<ComponentIndex> nodes;
  if (explicit_order)
    nodes = *explicit_order;
  else {
    for (ComponentIndex c : s.chosen_in_order())
      if (ix.at(c).component->kind == ComponentKind::Pass) nodes.push_back(c);
    std::sort(nodes.begin(), nodes.end());
  }
  const auto n = static_cast<uint32_t>(nodes.size());
  std::unordered_map<ComponentIndex, uint32_t> node_of;
  for (uint32_t v = 0; v < n; ++v)
    node_of.emplace(nodes[v], v);
  auto comp = [&](uint32_t v) -> const Component & { return *ix.at(nodes[v]).component; };
  auto parsed = [&](uint32_t v) -> const IndexedComponent & { return ix.at(nodes[v]); };

  // Facts before any pass: local facts and what the chosen non-pass components provide.
  std::vector<char> initial(s.fact_total(), 0);
  for (FactId f = ix.fact_count(); f < s.fact_total(); ++f)
    initial[f] = 1;
  for (ComponentIndex c : s.chosen_in_order())
    if (ix.at(c).component->kind != ComponentKind::Pass)
      for (FactId f : ix.at(c).provided)
        initial[f] = 1;
  // Facts some chosen pass provides, and by whom.
  std::unordered_map<FactId, std::vector<uint32_t>> pass_providers;
  for (uint32_t v = 0; v < n; ++v)
    for (FactId f : parsed(v).provided)
      pass_providers[f].push_back(v);

  std::vector<PassEdge> edges;
  std::unordered_map<FactId, std::vector<Consumer>> consumers;
  std::vector<std::vector<std::vector<FactId>>> req_matches(n);
  for (uint32_t v = 0; v < n; ++v) {
    const IndexedComponent &ic = parsed(v);
    req_matches[v].resize(ic.requires_.size());
    for (size_t r = 0; r < ic.requires_.size(); ++r) {
      const Capability &req = ic.requires_[r];
      std::vector<FactId> &m = req_matches[v][r] = s.requirement_matches(nodes[v], static_cast<uint32_t>(r));
      for (FactId f : m)
        consumers[f].push_back({v, &req});
      if (std::any_of(m.begin(), m.end(), [&](FactId f) { return initial[f] != 0; })) continue;
      // One provider before the consumer is enough: the designated provider is the earliest (stage, id)
      // chosen pass providing a match, preferring one whose stage is not later than the consumer's.
      std::optional<uint32_t> from;
      auto better = [&](uint32_t p, uint32_t q) {
        bool p_fits = comp(p).stage <= comp(v).stage, q_fits = comp(q).stage <= comp(v).stage;
        if (p_fits != q_fits) return p_fits;
        return comp(p).stage != comp(q).stage ? comp(p).stage < comp(q).stage : p < q;
      };
      for (FactId f : m) {
        auto it = pass_providers.find(f);
        if (it == pass_providers.end()) continue;
        for (uint32_t p : it->second)
          if (p != v && (!from || better(p, *from))) from = p;
      }
      if (from)
        edges.push_back(
            {*from, v,
             comp(v).id + " requires " + to_string(req) + ", which " + comp(*from).id + " provides"});
    }
  }
  // A pass that invalidates a fact runs after the passes of its stage or earlier that read it.
  for (uint32_t q = 0; q < n; ++q) {
    const IndexedComponent &qc = parsed(q);
    for (uint32_t k = 0; k < qc.invalidates.size(); ++k) {
      for (FactId f : s.invalidation_matches(nodes[q], k)) {
        auto it = consumers.find(f);
        if (it == consumers.end()) continue;
        for (const Consumer &c : it->second) {
          if (c.node == q || comp(c.node).stage > comp(q).stage) continue;
          bool reprovides = std::any_of(qc.provides.begin(), qc.provides.end(),
                                        [&](const Capability &p) { return matches(*c.requirement, p); });
          if (reprovides) continue;
          edges.push_back(
              {c.node, q,
               comp(q).id + " invalidates " + s.fact_text(f) + ", which " + comp(c.node).id + " requires"});
        }
      }
    }
  }
  // Explicit before/after between chosen passes.
  for (uint32_t v = 0; v < n; ++v) {
    for (const std::string &id : comp(v).before)
      if (auto w = ix.find(id); w && node_of.count(*w))
        edges.push_back({v, node_of[*w], comp(v).id + " declares before " + id});
    for (const std::string &id : comp(v).after)
      if (auto w = ix.find(id); w && node_of.count(*w))
        edges.push_back({node_of[*w], v, comp(v).id + " declares after " + id});
  }
  // Deduplicate (from, to), keeping the first reason.
  std::stable_sort(edges.begin(), edges.end(), [](const PassEdge &a, const PassEdge &b) {
    return a.from != b.from ? a.from < b.from : a.to < b.to;
  });
  edges.erase(
      std::unique(edges.begin(), edges.end(),
                  [](const PassEdge &a, const PassEdge &b) { return a.from == b.from && a.to == b.to; }),
      edges.end());

  // Stages are ordered: an edge from a later stage to an earlier one cannot be honoured.
  std::vector<PassEdge> kept;
  bool ordered_ok = true;
  for (PassEdge &e : edges) {
    if (comp(e.from).stage > comp(e.to).stage) {
      diagnostics.report(
          Diagnostic::error("resolve.stage-order", "pass '" + comp(e.from).id + "' (stage " +
                                                       stage_of(comp(e.from)) +
                                                       ") would have to run before pass '" + comp(e.to).id +
                                                       "' (stage " + stage_of(comp(e.to)) + "): " + e.reason)
              .with_note(
                  "stages run in order: canonicalize, analyze, typecheck, schedule, lower, emit, package"));
      ordered_ok = false;
      continue;
    }
    kept.push_back(std::move(e));
  }

  std::vector<uint32_t> order;
  if (explicit_order) {
    for (uint32_t v = 0; v < n; ++v)
      order.push_back(v);
    for (uint32_t v = 1; v < n; ++v)
      if (comp(v - 1).stage > comp(v).stage) {
        diagnostics.report(Diagnostic::error("resolve.explicit-order",
                                             "the explicit pass list runs '" + comp(v - 1).id + "' (stage " +
                                                 stage_of(comp(v - 1)) + ") before '" + comp(v).id +
                                                 "' (stage " + stage_of(comp(v)) + ")"));
        ordered_ok = false;
      }
    for (const PassEdge &e : kept)
      if (e.from > e.to) {
        diagnostics.report(Diagnostic::error("resolve.explicit-order",
                                             "the explicit pass list runs '" + comp(e.to).id + "' before '" +
                                                 comp(e.from).id + "', but " + e.reason));
        ordered_ok = false;
      }
  } else {
    std::vector<uint64_t> rank(n);
    for (uint32_t v = 0; v < n; ++v)
      rank[v] = (static_cast<uint64_t>(comp(v).stage) << 32) | v;
    PassOrder po = order_passes(n, rank, kept);
    for (const auto &cycle : po.cycles) {
      std::vector<std::string> ids;
      for (uint32_t v : cycle)
        ids.push_back("'" + comp(v).id + "'");
      std::string list;
      for (size_t i = 0; i < ids.size(); ++i)
        list += (i ? (i + 1 == ids.size() ? " and " : ", ") : "") + ids[i];
      Diagnostic d =
          Diagnostic::error("resolve.cycle", "passes " + list + " form a cycle and cannot be ordered");
      for (const PassEdge &e : kept)
        if (std::find(cycle.begin(), cycle.end(), e.from) != cycle.end() &&
            std::find(cycle.begin(), cycle.end(), e.to) != cycle.end())
          d.with_note(comp(e.from).id + " -> " + comp(e.to).id + ": " + e.reason);
      diagnostics.report(std::move(d));
      ordered_ok = false;
    }
    order = std::move(po.order);
  }
  if (!ordered_ok) return out;

  // Replay: requirements must hold when each pass runs.
  std::vector<char> present = initial;
  for (FactId f = 0; f < s.fact_total(); ++f)
    if (present[f]) out.initial_facts.push_back(s.fact_text(f));
  std::sort(out.initial_facts.begin(), out.initial_facts.end());
  std::vector<uint32_t> invalidated_by(s.fact_total(), UINT32_MAX);
  std::vector<std::vector<PassPredecessor>> preds(n);
  for (const PassEdge &e : kept)
    preds[e.to].push_back({comp(e.from).id, e.reason});
  for (uint32_t v : order) {
    const IndexedComponent &ic = parsed(v);
    for (size_t r = 0; r < ic.requires_.size(); ++r) {
      const Capability &req = ic.requires_[r];
      const auto &m = req_matches[v][r];
      if (req.optional || std::any_of(m.begin(), m.end(), [&](FactId f) { return present[f] != 0; }))
        continue;
      std::string why = "nothing that runs before it provides it";
      for (FactId f : m)
        if (invalidated_by[f] != UINT32_MAX) {
          why = "pass '" + comp(invalidated_by[f]).id + "' invalidates " + s.fact_text(f) + " before it runs";
          break;
        }
      diagnostics.report(
          Diagnostic::error("resolve.requirement-order",
                            "pass '" + comp(v).id + "' requires " + to_string(req) + ", but " + why));
    }
    PlannedPass p;
    p.component = &comp(v);
    for (uint32_t k = 0; k < ic.invalidates.size(); ++k)
      for (FactId f : s.invalidation_matches(nodes[v], k))
        if (present[f]) {
          present[f] = 0;
          invalidated_by[f] = v;
          p.removed.push_back(s.fact_text(f));
        }
    for (FactId f : ic.provided)
      if (!present[f]) {
        present[f] = 1;
        p.added.push_back(s.fact_text(f));
      }
    std::sort(p.added.begin(), p.added.end());
    std::sort(p.removed.begin(), p.removed.end());
    auto &pr = preds[v];
    std::stable_sort(pr.begin(), pr.end(), [](const auto &a, const auto &b) { return a.id < b.id; });
    pr.erase(std::unique(pr.begin(), pr.end(), [](const auto &a, const auto &b) { return a.id == b.id; }),
             pr.end());
    p.after = std::move(pr);
    out.passes.push_back(std::move(p));
  }
  return out;
}

} // namespace htp
