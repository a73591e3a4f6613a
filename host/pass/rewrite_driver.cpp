#include "pass/rewrite_driver.hpp"

#include <algorithm>
#include <map>

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

bool attached(const ast::Node *n, const ast::Node *root) {
  while (n->parent()) n = n->parent();
  return n == root;
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
  ast::Module &module = *ctx.module->module;
  std::map<std::string, size_t> fired_last;
  for (size_t iteration = 1; iteration <= options.max_iterations; ++iteration) {
    result.iterations = iteration;
    fired_last.clear();
    std::vector<ast::Node *> worklist;
    ast::walk(*module.root, [&](ast::Node &n) { worklist.push_back(&n); });
    size_t applied = 0;
    for (ast::Node *node : worklist) {
      if (!attached(node, module.root.get())) continue;  // an earlier rewrite replaced it
      for (const Pattern *p : index.for_kind(node->kind())) {
        if (!p->match(p->user_data, api, &ctx, to_handle(node))) continue;
        if (ctx.diagnostics.has_errors()) return result;
        RewriteRecord rec{p->name, ast::stable_id(*node), node->span(), iteration};
        HtpStatus s = p->apply(p->user_data, api, &ctx, to_handle(node));
        if (s != HTP_OK || ctx.diagnostics.has_errors()) {
          if (!ctx.diagnostics.has_errors())
            ctx.diagnostics.report(Diagnostic::error("rewrite.apply-failed",
                                                     "pattern '" + p->name + "' failed to apply at " + rec.node_id +
                                                         " (status " + std::to_string(s) + ")",
                                                     rec.span));
          return result;
        }
        result.rewrites.push_back(std::move(rec));
        ++fired_last[p->name];
        ++applied;
        if (result.rewrites.size() >= options.max_rewrites) break;
        // The node may have been replaced; later patterns see it on the next sweep.
        if (!attached(node, module.root.get())) break;
      }
      if (result.rewrites.size() >= options.max_rewrites) break;
    }
    if (applied == 0) {
      result.converged = true;
      return result;
    }
    if (result.rewrites.size() >= options.max_rewrites) break;
  }
  std::string firing;
  for (const auto &[name, count] : fired_last)
    firing += (firing.empty() ? "" : ", ") + name + " (" + std::to_string(count) + "x)";
  Diagnostic d = Diagnostic::error("rewrite.no-fixpoint",
                                   "rewrite patterns of '" + ctx.component + "' did not reach a fixpoint after " +
                                       std::to_string(result.iterations) + " iterations (" +
                                       std::to_string(result.rewrites.size()) +
                                       " rewrites); still firing: " + firing);
  ctx.diagnostics.report(std::move(d));
  return result;
}

}  // namespace htp
