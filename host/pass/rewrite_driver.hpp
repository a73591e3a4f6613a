// The host's rewrite driver: applies a pass's patterns over a module to a fixpoint, deterministically,
// with an iteration bound, recording every rewrite's provenance.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "diag/diagnostic.hpp"
#include "pass/invocation.hpp"
#include "registry/component.hpp"

namespace htp {

/// One applied rewrite: which pattern, at which node (its stable id before the rewrite), from where.
struct RewriteRecord {
  std::string pattern;
  std::string node_id;
  Span span;
  size_t iteration = 0;
};

/// Called after each applied rewrite (instrumentation: traces, counters).
using RewriteObserver = std::function<void(const RewriteRecord &)>;

struct RewriteOptions {
  size_t max_iterations = 16;  ///< Worklist generations without reaching a fixpoint before giving up.
  size_t max_rewrites = 1000000;
  RewriteObserver on_rewrite;
};

struct RewriteResult {
  bool converged = false;
  size_t iterations = 0;  ///< Worklist generations processed.
  size_t visits = 0;      ///< Nodes offered to the patterns (a node once per generation it was queued in).
  size_t attempts = 0;    ///< Pattern calls (match or match_and_rewrite).
  size_t requeued = 0;    ///< Nodes the edits of rewrites put back on the worklist.
  std::vector<RewriteRecord> rewrites;
};

/// Applies `patterns` to the module of `ctx` to a fixpoint with a worklist fed by the host's edit calls.
/// Generation 1 offers every node some pattern can root at, in pre-order; each later generation offers
/// the nodes the previous one's rewrites created, changed or moved, and their parents, once each, in the
/// order of the edits; nodes that left the tree are dropped. At each node, patterns whose root types
/// include it are tried by descending benefit, then name. Cost: O(nodes) for generation 1, then
/// O(touched nodes) per rewrite. Errors reported by patterns stop the driver; so does a pattern that
/// changes the tree but reports no rewrite. Needing more than `max_iterations` generations is an error
/// naming the patterns that kept firing. Node attributes are metadata: setting one queues nothing.
RewriteResult drive_patterns(const std::vector<Pattern> &patterns, const HtpHostApi *api, HtpPassContext &ctx,
                             const RewriteOptions &options = {});

}  // namespace htp
