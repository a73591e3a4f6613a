#include "pass/rewrite_driver.hpp"

#include <algorithm>
#include <map>
#include <unordered_set>

#include "ast/grammar.hpp"
#include "ast/stable_id.hpp"
#include "ast/walk.hpp"

namespace htp {

namespace {

/// Patterns grouped by the node kind they can root at; "any" patterns apply to every kind.
class PatternIndex {
public:
  explicit PatternIndex(const std::vector<Pattern> &patterns) {
    std::vector<const Pattern *> sorted;
    for (const auto &p : patterns) sorted.push_back(&p);
    std::stable_sort(sorted.begin(), sorted.end(), [](const Pattern *a, const Pattern *b) {
      return a->benefit != b->benefit ? a->benefit > b->benefit : a->name < b->name;
    });
    by_kind_.resize(ast::kKindCount);
    for (const Pattern *p : sorted) {
      if (p->root_types.empty()) {
        for (auto &v : by_kind_) v.push_back(p);
        continue;
      }
      for (const auto &t : p->root_types)
        if (auto k = ast::kind_from_name(t)) by_kind_[static_cast<size_t>(*k)].push_back(p);
    }
  }
  const std::vector<const Pattern *> &for_kind(ast::Kind k) const { return by_kind_[static_cast<size_t>(k)]; }

private:
  std::vector<std::vector<const Pattern *>> by_kind_;
};

/// The worklist, fed by the host's edit calls: the nodes a rewrite created, changed or re-parented, and
/// their parents, wait for the next generation; nodes that left the tree are dropped. Generation 1 is the
/// whole tree in pre-order; later generations hold nodes in the order their edits happened, each once.
class Worklist final : public EditListener {
public:
  /// A node and the patterns that may root at it (read once, so visits need not reload its kind).
  struct Entry {
    ast::Node *node;
    const std::vector<const Pattern *> *patterns;
  };

  Worklist(ast::Node &root, const PatternIndex &index, std::vector<Entry> &storage)
      : root_(root), index_(index), current_(storage) {
    current_.clear();
    ast::walk(root, [&](ast::Node &n) {
      const auto &candidates = index_.for_kind(n.kind());
      if (!candidates.empty()) current_.push_back({&n, &candidates});
    });
  }

  /// The nodes of the current generation (stable while it is processed: edits go to the next one).
  const std::vector<Entry> &current() const { return current_; }
  /// Moves to the next generation; false when it is empty (a fixpoint).
  bool advance() {
    current_.clear();
    for (ast::Node *n : next_)
      if (!gone(n)) current_.push_back({n, &index_.for_kind(n->kind())});
    next_.clear();
    queued_.clear();
    return !current_.empty();
  }
  /// Whether `n` left the tree during this pass (and was not put back).
  bool gone(const ast::Node *n) const { return !dead_.empty() && dead_.count(n) != 0; }
  size_t requeued() const { return requeued_; }

  /// The stable id of the node a pattern is offered, taken before its first edit (provenance).
  void offer(const ast::Node *node) {
    offered_ = node;
    offered_id_.clear();
  }
  std::string take_offered_id() {
    if (offered_id_.empty() && offered_) offered_id_ = ast::stable_id(*offered_);
    offered_ = nullptr;
    return std::move(offered_id_);
  }

  void will_edit() override {
    if (offered_ && offered_id_.empty()) offered_id_ = ast::stable_id(*offered_);
  }
  void changed(ast::Node &node) override {
    if (!attached(node)) return;
    enqueue(&node);
    if (node.parent()) enqueue(node.parent());
  }
  void inserted(ast::Node &subtree) override {
    if (!attached(subtree)) return;
    ast::walk(subtree, [&](ast::Node &n) {
      dead_.erase(&n);
      enqueue(&n);
    });
  }
  void removed(ast::Node &subtree, ast::Node &from) override {
    if (!attached(from)) return;
    ast::walk(subtree, [&](ast::Node &n) { dead_.insert(&n); });
  }

private:
  /// Whether `n` hangs from the module root (climbs once per edit, never per visit).
  bool attached(const ast::Node &n) const {
    const ast::Node *p = &n;
    while (p->parent()) p = p->parent();
    return p == &root_;
  }
  void enqueue(ast::Node *n) {
    if (index_.for_kind(n->kind()).empty()) return;  // no pattern can root here
    if (queued_.insert(n).second) {
      next_.push_back(n);
      ++requeued_;
    }
  }

  ast::Node &root_;
  const PatternIndex &index_;
  std::vector<Entry> &current_;  ///< Storage the driver reuses across runs (no fresh pages per pass).
  std::vector<ast::Node *> next_;
  std::unordered_set<const ast::Node *> queued_;  ///< Members of next_.
  std::unordered_set<const ast::Node *> dead_;    ///< Nodes that left the tree.
  size_t requeued_ = 0;
  const ast::Node *offered_ = nullptr;
  std::string offered_id_;
};

/// Installs a listener on a module for the lifetime of a scope.
class ListenerScope {
public:
  ListenerScope(HtpModule &m, EditListener *l) : m_(m), previous_(m.listener) { m.listener = l; }
  ~ListenerScope() { m_.listener = previous_; }
  ListenerScope(const ListenerScope &) = delete;
  ListenerScope &operator=(const ListenerScope &) = delete;

private:
  HtpModule &m_;
  EditListener *previous_;
};

enum class Outcome { NoMatch, Applied, Failed };

/// Offers `node` to `p`: one match_and_rewrite call, or match then apply. A pattern that declines must
/// leave the tree as it was; one that fails must say why. On Applied, `id` is the node's stable id from
/// before the rewrite. A replaced node stays alive (the module keeps detached nodes), so its span is read
/// afterwards.
Outcome try_pattern(const Pattern &p, const HtpHostApi *api, HtpPassContext &ctx, ast::Node *node,
                    Worklist &worklist, std::string &id) {
  const size_t before = ctx.module->changes;
  worklist.offer(node);
  Outcome out = Outcome::NoMatch;
  int32_t status = 0;
  if (p.match_and_rewrite) {
    status = p.match_and_rewrite(p.user_data, api, &ctx, to_handle(node));
    out = status == HTP_REWRITE_APPLIED    ? Outcome::Applied
          : status == HTP_REWRITE_NO_MATCH ? Outcome::NoMatch
                                           : Outcome::Failed;
  } else if (p.match(p.user_data, api, &ctx, to_handle(node)) && !ctx.diagnostics.has_errors() &&
             ctx.module->changes == before) {
    worklist.will_edit();  // the id before apply
    status = p.apply(p.user_data, api, &ctx, to_handle(node));
    out = status == HTP_OK ? Outcome::Applied : Outcome::Failed;
  }
  if (out == Outcome::NoMatch && ctx.module->changes == before && !ctx.diagnostics.has_errors()) {
    worklist.offer(nullptr);
    return out;
  }
  id = worklist.take_offered_id();
  if (ctx.diagnostics.has_errors()) return Outcome::Failed;
  if (out == Outcome::NoMatch) {
    ctx.diagnostics.report(Diagnostic::error(
        "rewrite.changed-without-match",
        "pattern '" + p.name + "' changed the tree at " + id + " but did not report a rewrite", node->span()));
    return Outcome::Failed;
  }
  if (out == Outcome::Failed)
    ctx.diagnostics.report(Diagnostic::error(
        "rewrite.apply-failed",
        "pattern '" + p.name + "' failed to apply at " + id + " (status " + std::to_string(status) + ")",
        node->span()));
  return out;
}

}  // namespace

RewriteResult drive_patterns(const std::vector<Pattern> &patterns, const HtpHostApi *api, HtpPassContext &ctx,
                             const RewriteOptions &options) {
  RewriteResult result;
  if (patterns.empty()) {
    result.converged = true;
    return result;
  }
  PatternIndex index(patterns);
  // Generation 1 holds every node a pattern can root at; its storage is kept per thread so that a pass
  // over a large module does not fault in fresh pages each time (this dominated a 100k-node pass).
  thread_local std::vector<Worklist::Entry> storage;
  thread_local bool storage_in_use = false;
  std::vector<Worklist::Entry> own;  // a nested driver (none today) must not share it
  const bool nested = storage_in_use;
  storage_in_use = true;
  struct Release {
    bool nested;
    ~Release() {
      if (!nested) storage_in_use = false;
    }
  } release{nested};
  Worklist worklist(*ctx.module->module->root, index, nested ? own : storage);
  ListenerScope listening(*ctx.module, &worklist);
  std::map<std::string, size_t> fired_last;
  bool more = !worklist.current().empty();
  size_t generation = 0;
  while (more) {
    if (generation == options.max_iterations || result.rewrites.size() >= options.max_rewrites) break;
    result.iterations = ++generation;
    fired_last.clear();
    for (const auto &[node, candidates] : worklist.current()) {
      if (worklist.gone(node)) continue;  // an earlier rewrite of this generation took it out
      ++result.visits;
      for (const Pattern *p : *candidates) {
        ++result.attempts;
        std::string id;
        Outcome o = try_pattern(*p, api, ctx, node, worklist, id);
        if (o == Outcome::Failed) return result;
        if (o == Outcome::NoMatch) continue;
        result.rewrites.push_back(RewriteRecord{p->name, std::move(id), node->span(), generation});
        if (options.on_rewrite) options.on_rewrite(result.rewrites.back());
        ++fired_last[p->name];
        if (result.rewrites.size() >= options.max_rewrites) break;
        if (worklist.gone(node)) break;  // replaced: what took its place is queued for the next generation
      }
      if (result.rewrites.size() >= options.max_rewrites) break;
    }
    more = worklist.advance();
  }
  result.requeued = worklist.requeued();
  if (!more) {
    result.converged = true;
    return result;
  }
  std::string firing;
  for (const auto &[name, count] : fired_last)
    firing += (firing.empty() ? "" : ", ") + name + " (" + std::to_string(count) + "x)";
  Diagnostic d = Diagnostic::error("rewrite.no-fixpoint",
                                   "rewrite patterns of '" + ctx.component + "' did not reach a fixpoint after " +
                                       std::to_string(result.iterations) + " iterations (" +
                                       std::to_string(result.rewrites.size()) +
                                       " rewrites); still firing: " + firing,
                                   // (at the last rewrite, which is where a pattern that keeps firing fired)
                                   result.rewrites.empty() ? Span{} : result.rewrites.back().span);
  ctx.diagnostics.report(std::move(d));
  return result;
}

}  // namespace htp
