// The host's rewrite driver: applies a pass's patterns over a module to a fixpoint, deterministically,
// with an iteration bound, recording every rewrite's provenance.
#pragma once

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

struct RewriteOptions {
  size_t max_iterations = 16;  ///< Full sweeps without reaching a fixpoint before giving up.
  size_t max_rewrites = 1000000;
};

struct RewriteResult {
  bool converged = false;
  size_t iterations = 0;
  std::vector<RewriteRecord> rewrites;
};

/// Applies `patterns` to the module of `ctx` until a sweep applies none. Sweeps visit the tree in
/// pre-order; at each node, patterns whose root types include it are tried by descending benefit, then
/// name. Errors reported by patterns stop the driver. Failing to converge is an error naming the
/// patterns that kept firing.
RewriteResult drive_patterns(const std::vector<Pattern> &patterns, const HtpHostApi *api, HtpPassContext &ctx,
                             const RewriteOptions &options = {});

}  // namespace htp
