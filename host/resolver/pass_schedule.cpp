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

/// schedule_passes in named steps: the graph's nodes and initial facts, its edges (requirements,
/// invalidations, declared before/after; deduplicated; stage inversions reported), an order (topological
/// or the user's, checked) and the replay of facts along it.
class PassScheduler {
public:
  PassScheduler(const Selection &s, const std::optional<std::vector<ComponentIndex>> &explicit_order,
                DiagnosticList &diagnostics)
      : s_(s), ix_(s.index()), explicit_(explicit_order), diags_(diagnostics) {}

  PassSchedule run() {
    collect_nodes();
    collect_initial_facts();
    add_requirement_edges();
    add_invalidation_edges();
    add_declared_edges();
    deduplicate_edges();
    bool ordered = drop_stage_inversions();
    std::vector<uint32_t> order;
    ordered = (explicit_ ? check_explicit_order(order) : topological_order(order)) && ordered;
    if (!ordered) return {};
    return replay(order);
  }

private:
  const Component &comp(uint32_t v) const { return *ix_.at(nodes_[v]).component; }
  const IndexedComponent &parsed(uint32_t v) const { return ix_.at(nodes_[v]); }

  /// Nodes: the chosen passes, ascending id (or the explicit order).
  void collect_nodes() {
    if (explicit_) {
      nodes_ = *explicit_;
    } else {
      for (ComponentIndex c : s_.chosen_in_order())
        if (ix_.at(c).component->kind == ComponentKind::Pass) nodes_.push_back(c);
      std::sort(nodes_.begin(), nodes_.end());
    }
    n_ = static_cast<uint32_t>(nodes_.size());
    for (uint32_t v = 0; v < n_; ++v)
      node_of_.emplace(nodes_[v], v);
  }

  /// Facts before any pass: local facts and what the chosen non-pass components provide; and which chosen
  /// passes provide each fact.
  void collect_initial_facts() {
    initial_.assign(s_.fact_total(), 0);
    for (FactId f = ix_.fact_count(); f < s_.fact_total(); ++f)
      initial_[f] = 1;
    for (ComponentIndex c : s_.chosen_in_order())
      if (ix_.at(c).component->kind != ComponentKind::Pass)
        for (FactId f : ix_.at(c).provided)
          initial_[f] = 1;
    for (uint32_t v = 0; v < n_; ++v)
      for (FactId f : parsed(v).provided)
        pass_providers_[f].push_back(v);
  }

  /// A requirement not met initially orders its pass after one provider: the earliest (stage, id) chosen
  /// pass providing a match, preferring one whose stage is not later than the consumer's.
  void add_requirement_edges() {
    req_matches_.resize(n_);
    for (uint32_t v = 0; v < n_; ++v) {
      const IndexedComponent &ic = parsed(v);
      req_matches_[v].resize(ic.requires_.size());
      for (size_t r = 0; r < ic.requires_.size(); ++r) {
        const Capability &req = ic.requires_[r];
        std::vector<FactId> &m = req_matches_[v][r] = s_.requirement_matches(nodes_[v], static_cast<uint32_t>(r));
        for (FactId f : m)
          consumers_[f].push_back({v, &req});
        if (std::any_of(m.begin(), m.end(), [&](FactId f) { return initial_[f] != 0; })) continue;
        std::optional<uint32_t> from;
        auto better = [&](uint32_t p, uint32_t q) {
          bool p_fits = comp(p).stage <= comp(v).stage, q_fits = comp(q).stage <= comp(v).stage;
          if (p_fits != q_fits) return p_fits;
          return comp(p).stage != comp(q).stage ? comp(p).stage < comp(q).stage : p < q;
        };
        for (FactId f : m) {
          auto it = pass_providers_.find(f);
          if (it == pass_providers_.end()) continue;
          for (uint32_t p : it->second)
            if (p != v && (!from || better(p, *from))) from = p;
        }
        if (from)
          edges_.push_back(
              {*from, v, comp(v).id + " requires " + to_string(req) + ", which " + comp(*from).id + " provides"});
      }
    }
  }

  /// A pass that invalidates a fact runs after the passes of its stage or earlier that read it.
  void add_invalidation_edges() {
    for (uint32_t q = 0; q < n_; ++q) {
      const IndexedComponent &qc = parsed(q);
      for (uint32_t k = 0; k < qc.invalidates.size(); ++k) {
        for (FactId f : s_.invalidation_matches(nodes_[q], k)) {
          auto it = consumers_.find(f);
          if (it == consumers_.end()) continue;
          for (const Consumer &c : it->second) {
            if (c.node == q || comp(c.node).stage > comp(q).stage) continue;
            bool reprovides = std::any_of(qc.provides.begin(), qc.provides.end(),
                                          [&](const Capability &p) { return matches(*c.requirement, p); });
            if (reprovides) continue;
            edges_.push_back(
                {c.node, q, comp(q).id + " invalidates " + s_.fact_text(f) + ", which " + comp(c.node).id + " requires"});
          }
        }
      }
    }
  }

  /// Explicit before/after between chosen passes.
  void add_declared_edges() {
    for (uint32_t v = 0; v < n_; ++v) {
      for (const std::string &id : comp(v).before)
        if (auto w = ix_.find(id); w && node_of_.count(*w))
          edges_.push_back({v, node_of_[*w], comp(v).id + " declares before " + id});
      for (const std::string &id : comp(v).after)
        if (auto w = ix_.find(id); w && node_of_.count(*w))
          edges_.push_back({node_of_[*w], v, comp(v).id + " declares after " + id});
    }
  }

  /// One edge per (from, to), keeping the first reason.
  void deduplicate_edges() {
    std::stable_sort(edges_.begin(), edges_.end(), [](const PassEdge &a, const PassEdge &b) {
      return a.from != b.from ? a.from < b.from : a.to < b.to;
    });
    edges_.erase(std::unique(edges_.begin(), edges_.end(),
                             [](const PassEdge &a, const PassEdge &b) { return a.from == b.from && a.to == b.to; }),
                 edges_.end());
  }

  /// Stages are ordered: an edge from a later stage to an earlier one cannot be honoured (reported, dropped).
  bool drop_stage_inversions() {
    std::vector<PassEdge> kept;
    bool ok = true;
    for (PassEdge &e : edges_) {
      if (comp(e.from).stage > comp(e.to).stage) {
        diags_.report(
            Diagnostic::error("resolve.stage-order", "pass '" + comp(e.from).id + "' (stage " + stage_of(comp(e.from)) +
                                                         ") would have to run before pass '" + comp(e.to).id +
                                                         "' (stage " + stage_of(comp(e.to)) + "): " + e.reason)
                .with_note("stages run in order: canonicalize, analyze, typecheck, schedule, lower, emit, package"));
        ok = false;
        continue;
      }
      kept.push_back(std::move(e));
    }
    edges_ = std::move(kept);
    return ok;
  }

  /// The user's pass list as given, checked against the stages and every edge.
  bool check_explicit_order(std::vector<uint32_t> &order) {
    bool ok = true;
    for (uint32_t v = 0; v < n_; ++v)
      order.push_back(v);
    for (uint32_t v = 1; v < n_; ++v)
      if (comp(v - 1).stage > comp(v).stage) {
        diags_.report(Diagnostic::error("resolve.explicit-order", "the explicit pass list runs '" + comp(v - 1).id +
                                                                      "' (stage " + stage_of(comp(v - 1)) + ") before '" +
                                                                      comp(v).id + "' (stage " + stage_of(comp(v)) + ")"));
        ok = false;
      }
    for (const PassEdge &e : edges_)
      if (e.from > e.to) {
        diags_.report(Diagnostic::error("resolve.explicit-order", "the explicit pass list runs '" + comp(e.to).id +
                                                                      "' before '" + comp(e.from).id + "', but " + e.reason));
        ok = false;
      }
    return ok;
  }

  /// A topological order by (stage, id); each cycle is reported with its edges as notes.
  bool topological_order(std::vector<uint32_t> &order) {
    std::vector<uint64_t> rank(n_);
    for (uint32_t v = 0; v < n_; ++v)
      rank[v] = (static_cast<uint64_t>(comp(v).stage) << 32) | v;
    PassOrder po = order_passes(n_, rank, edges_);
    for (const auto &cycle : po.cycles) {
      std::vector<std::string> ids;
      for (uint32_t v : cycle)
        ids.push_back("'" + comp(v).id + "'");
      std::string list;
      for (size_t i = 0; i < ids.size(); ++i)
        list += (i ? (i + 1 == ids.size() ? " and " : ", ") : "") + ids[i];
      Diagnostic d = Diagnostic::error("resolve.cycle", "passes " + list + " form a cycle and cannot be ordered");
      for (const PassEdge &e : edges_)
        if (std::find(cycle.begin(), cycle.end(), e.from) != cycle.end() &&
            std::find(cycle.begin(), cycle.end(), e.to) != cycle.end())
          d.with_note(comp(e.from).id + " -> " + comp(e.to).id + ": " + e.reason);
      diags_.report(std::move(d));
    }
    order = std::move(po.order);
    return po.cycles.empty();
  }

  /// Replays the facts along `order`: every requirement must hold when its pass runs; records each pass's
  /// added and removed facts and its predecessors.
  PassSchedule replay(const std::vector<uint32_t> &order) {
    PassSchedule out;
    std::vector<char> present = initial_;
    for (FactId f = 0; f < s_.fact_total(); ++f)
      if (present[f]) out.initial_facts.push_back(s_.fact_text(f));
    std::sort(out.initial_facts.begin(), out.initial_facts.end());
    std::vector<uint32_t> invalidated_by(s_.fact_total(), UINT32_MAX);
    std::vector<std::vector<PassPredecessor>> preds(n_);
    for (const PassEdge &e : edges_)
      preds[e.to].push_back({comp(e.from).id, e.reason});
    for (uint32_t v : order) {
      const IndexedComponent &ic = parsed(v);
      for (size_t r = 0; r < ic.requires_.size(); ++r) {
        const Capability &req = ic.requires_[r];
        const auto &m = req_matches_[v][r];
        if (req.optional || std::any_of(m.begin(), m.end(), [&](FactId f) { return present[f] != 0; })) continue;
        std::string why = "nothing that runs before it provides it";
        for (FactId f : m)
          if (invalidated_by[f] != UINT32_MAX) {
            why = "pass '" + comp(invalidated_by[f]).id + "' invalidates " + s_.fact_text(f) + " before it runs";
            break;
          }
        diags_.report(Diagnostic::error("resolve.requirement-order",
                                        "pass '" + comp(v).id + "' requires " + to_string(req) + ", but " + why));
      }
      PlannedPass p;
      p.component = &comp(v);
      for (uint32_t k = 0; k < ic.invalidates.size(); ++k)
        for (FactId f : s_.invalidation_matches(nodes_[v], k))
          if (present[f]) {
            present[f] = 0;
            invalidated_by[f] = v;
            p.removed.push_back(s_.fact_text(f));
          }
      for (FactId f : ic.provided)
        if (!present[f]) {
          present[f] = 1;
          p.added.push_back(s_.fact_text(f));
        }
      std::sort(p.added.begin(), p.added.end());
      std::sort(p.removed.begin(), p.removed.end());
      auto &pr = preds[v];
      std::stable_sort(pr.begin(), pr.end(), [](const auto &a, const auto &b) { return a.id < b.id; });
      pr.erase(std::unique(pr.begin(), pr.end(), [](const auto &a, const auto &b) { return a.id == b.id; }), pr.end());
      p.after = std::move(pr);
      out.passes.push_back(std::move(p));
    }
    return out;
  }

  const Selection &s_;
  const CapabilityIndex &ix_;
  const std::optional<std::vector<ComponentIndex>> &explicit_;
  DiagnosticList &diags_;
  std::vector<ComponentIndex> nodes_;
  uint32_t n_ = 0;
  std::unordered_map<ComponentIndex, uint32_t> node_of_;
  std::vector<char> initial_;
  std::unordered_map<FactId, std::vector<uint32_t>> pass_providers_;
  std::unordered_map<FactId, std::vector<Consumer>> consumers_;
  std::vector<std::vector<std::vector<FactId>>> req_matches_;
  std::vector<PassEdge> edges_;
};

} // namespace

PassSchedule schedule_passes(const Selection &s, const std::optional<std::vector<ComponentIndex>> &explicit_order,
                             DiagnosticList &diagnostics) {
  return PassScheduler(s, explicit_order, diagnostics).run();
}

} // namespace htp
