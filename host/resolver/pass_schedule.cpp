#include "resolver/pass_schedule.hpp"

#include <algorithm>
#include <optional>
#include <span>

#include "resolver/pass_order.hpp"

namespace htp {

namespace {

constexpr uint32_t kNone = UINT32_MAX;

/// Lists of values per fact, chained through one array in insertion order (no allocation per fact).
template <class T> class FactLists {
public:
  explicit FactLists(size_t facts) : head_(facts, kNone), tail_(facts, kNone) {}
  void add(FactId f, T value) {
    auto e = static_cast<uint32_t>(entries_.size());
    entries_.push_back({std::move(value), kNone});
    if (head_[f] == kNone)
      head_[f] = e;
    else
      entries_[tail_[f]].next = e;
    tail_[f] = e;
  }
  /// Calls fn(value) for each value of f, in insertion order.
  template <class Fn> void each(FactId f, Fn fn) const {
    for (uint32_t e = head_[f]; e != kNone; e = entries_[e].next)
      fn(entries_[e].value);
  }

private:
  struct Entry {
    T value;
    uint32_t next;
  };
  std::vector<uint32_t> head_, tail_;
  std::vector<Entry> entries_;
};

/// Why one pass must run after another, before the reason is spelled (most are deduplicated away or
/// never printed by the time they are).
enum class Why : uint8_t { Requirement, Invalidation, Before, After };
struct Constraint {
  uint32_t from;
  uint32_t to;
  Why why;
  uint32_t detail; ///< Requirement: entry of to's requires; Invalidation: the fact; Before/After: entry of
                   ///< the declaring pass's list (from's before, to's after).
};

/// A requirement of one pass.
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
      : s_(s), ix_(s.index()), explicit_(explicit_order), diags_(diagnostics), pass_providers_(s.fact_total()),
        consumers_(s.fact_total()) {}

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
        if (ix_.at(c).kind == ComponentKind::Pass) nodes_.push_back(c);
      std::sort(nodes_.begin(), nodes_.end());
    }
    n_ = static_cast<uint32_t>(nodes_.size());
    for (uint32_t v = 0; v < n_; ++v)
      node_of_.emplace_back(nodes_[v], v);
    std::sort(node_of_.begin(), node_of_.end());
  }

  /// The node of chosen pass c, if it is one.
  std::optional<uint32_t> node_of(ComponentIndex c) const {
    auto it = std::lower_bound(node_of_.begin(), node_of_.end(), std::make_pair(c, uint32_t{0}));
    if (it == node_of_.end() || it->first != c) return std::nullopt;
    return it->second;
  }

  /// The facts requirement r of node v matches.
  std::span<const FactId> req_matches(uint32_t v, size_t r) const {
    uint32_t k = req_base_[v] + static_cast<uint32_t>(r);
    return {req_arena_.data() + req_offsets_[k], req_arena_.data() + req_offsets_[k + 1]};
  }

  /// Facts before any pass: local facts and what the chosen non-pass components provide; and which chosen
  /// passes provide each fact.
  void collect_initial_facts() {
    initial_.assign(s_.fact_total(), 0);
    for (FactId f = ix_.fact_count(); f < s_.fact_total(); ++f)
      initial_[f] = 1;
    for (ComponentIndex c : s_.chosen_in_order())
      if (ix_.at(c).kind != ComponentKind::Pass)
        for (FactId f : ix_.at(c).provided)
          initial_[f] = 1;
    for (uint32_t v = 0; v < n_; ++v)
      for (FactId f : parsed(v).provided)
        pass_providers_.add(f, v);
  }

  /// A requirement not met initially orders its pass after one provider: the earliest (stage, id) chosen
  /// pass providing a match, preferring one whose stage is not later than the consumer's.
  void add_requirement_edges() {
    req_base_.resize(n_);
    req_offsets_.assign(1, 0);
    for (uint32_t v = 0; v < n_; ++v) {
      const IndexedComponent &ic = parsed(v);
      req_base_[v] = static_cast<uint32_t>(req_offsets_.size() - 1);
      for (size_t r = 0; r < ic.requires_.size(); ++r) {
        s_.append_requirement_matches(nodes_[v], static_cast<uint32_t>(r), req_arena_);
        req_offsets_.push_back(static_cast<uint32_t>(req_arena_.size()));
      }
    }
    for (uint32_t v = 0; v < n_; ++v) {
      const IndexedComponent &ic = parsed(v);
      for (size_t r = 0; r < ic.requires_.size(); ++r) {
        const Capability &req = ic.requires_[r];
        std::span<const FactId> m = req_matches(v, r);
        for (FactId f : m)
          consumers_.add(f, {v, &req});
        if (std::any_of(m.begin(), m.end(), [&](FactId f) { return initial_[f] != 0; })) continue;
        std::optional<uint32_t> from;
        auto better = [&](uint32_t p, uint32_t q) {
          bool p_fits = comp(p).stage <= comp(v).stage, q_fits = comp(q).stage <= comp(v).stage;
          if (p_fits != q_fits) return p_fits;
          return comp(p).stage != comp(q).stage ? comp(p).stage < comp(q).stage : p < q;
        };
        for (FactId f : m)
          pass_providers_.each(f, [&](uint32_t p) {
            if (p != v && (!from || better(p, *from))) from = p;
          });
        if (from) constraints_.push_back({*from, v, Why::Requirement, static_cast<uint32_t>(r)});
      }
    }
  }

  /// A pass that invalidates a fact runs after the passes of its stage or earlier that read it.
  void add_invalidation_edges() {
    for (uint32_t q = 0; q < n_; ++q) {
      const IndexedComponent &qc = parsed(q);
      for (uint32_t k = 0; k < qc.invalidates.size(); ++k) {
        for (FactId f : s_.invalidation_matches(nodes_[q], k)) {
          consumers_.each(f, [&](const Consumer &c) {
            if (c.node == q || comp(c.node).stage > comp(q).stage) return;
            bool reprovides = std::any_of(qc.provides.begin(), qc.provides.end(),
                                          [&](const Capability &p) { return matches(*c.requirement, p); });
            if (reprovides) return;
            constraints_.push_back({c.node, q, Why::Invalidation, f});
          });
        }
      }
    }
  }

  /// Explicit before/after between chosen passes.
  void add_declared_edges() {
    for (uint32_t v = 0; v < n_; ++v) {
      const auto &before = comp(v).before, &after = comp(v).after;
      for (uint32_t k = 0; k < before.size(); ++k)
        if (auto c = ix_.find(before[k]))
          if (auto w = node_of(*c)) constraints_.push_back({v, *w, Why::Before, k});
      for (uint32_t k = 0; k < after.size(); ++k)
        if (auto c = ix_.find(after[k]))
          if (auto w = node_of(*c)) constraints_.push_back({*w, v, Why::After, k});
    }
  }

  /// One edge per (from, to), keeping the first reason; reasons are spelled only for the edges kept.
  void deduplicate_edges() {
    std::stable_sort(constraints_.begin(), constraints_.end(), [](const Constraint &a, const Constraint &b) {
      return a.from != b.from ? a.from < b.from : a.to < b.to;
    });
    constraints_.erase(std::unique(constraints_.begin(), constraints_.end(),
                                   [](const Constraint &a, const Constraint &b) {
                                     return a.from == b.from && a.to == b.to;
                                   }),
                       constraints_.end());
    edges_.reserve(constraints_.size());
    for (const Constraint &c : constraints_)
      edges_.push_back({c.from, c.to, reason(c)});
  }

  /// The reason of an ordering constraint, as the plan states it.
  std::string reason(const Constraint &c) const {
    switch (c.why) {
    case Why::Requirement:
      return comp(c.to).id + " requires " + to_string(parsed(c.to).requires_[c.detail]) + ", which " +
             comp(c.from).id + " provides";
    case Why::Invalidation:
      return comp(c.to).id + " invalidates " + std::string(s_.fact_text(c.detail)) + ", which " + comp(c.from).id +
             " requires";
    case Why::Before: return comp(c.from).id + " declares before " + comp(c.from).before[c.detail];
    case Why::After: return comp(c.to).id + " declares after " + comp(c.to).after[c.detail];
    }
    return {};
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
      if (present[f]) out.initial_facts.emplace_back(s_.fact_text(f));
    std::sort(out.initial_facts.begin(), out.initial_facts.end());
    std::vector<uint32_t> invalidated_by(s_.fact_total(), UINT32_MAX);
    std::vector<std::vector<PassPredecessor>> preds(n_);
    for (PassEdge &e : edges_) // their last use: the reasons move into the plan
      preds[e.to].push_back({comp(e.from).id, std::move(e.reason)});
    for (uint32_t v : order) {
      const IndexedComponent &ic = parsed(v);
      for (size_t r = 0; r < ic.requires_.size(); ++r) {
        const Capability &req = ic.requires_[r];
        std::span<const FactId> m = req_matches(v, r);
        if (req.optional || std::any_of(m.begin(), m.end(), [&](FactId f) { return present[f] != 0; })) continue;
        std::string why = "nothing that runs before it provides it";
        for (FactId f : m)
          if (invalidated_by[f] != UINT32_MAX) {
            why = "pass '" + comp(invalidated_by[f]).id + "' invalidates " + std::string(s_.fact_text(f)) + " before it runs";
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
            p.removed.emplace_back(s_.fact_text(f));
          }
      p.added.reserve(ic.provided.size());
      for (FactId f : ic.provided)
        if (!present[f]) {
          present[f] = 1;
          p.added.emplace_back(s_.fact_text(f));
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
  std::vector<std::pair<ComponentIndex, uint32_t>> node_of_; ///< (chosen pass, node), ascending.
  std::vector<char> initial_;
  FactLists<uint32_t> pass_providers_; ///< Fact -> chosen passes (nodes) providing it.
  FactLists<Consumer> consumers_;      ///< Fact -> requirements of nodes it matches.
  std::vector<FactId> req_arena_;      ///< Facts each requirement of each node matches.
  std::vector<uint32_t> req_offsets_;  ///< Row k of req_arena_ is [req_offsets_[k], req_offsets_[k + 1]).
  std::vector<uint32_t> req_base_;     ///< Node -> its first row.
  std::vector<Constraint> constraints_; ///< In the order found; the first of each (from, to) wins.
  std::vector<PassEdge> edges_;         ///< Deduplicated constraints with their reasons.
};

} // namespace

PassSchedule schedule_passes(const Selection &s, const std::optional<std::vector<ComponentIndex>> &explicit_order,
                             DiagnosticList &diagnostics) {
  return PassScheduler(s, explicit_order, diagnostics).run();
}

} // namespace htp
