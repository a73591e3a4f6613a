// The capability resolver: given the loaded components, a target and the program's obligations, it
// picks one backend and one binding, the pipeline template, every pass that applies and every provider
// a requirement needs, orders the passes and returns a Plan — or diagnostics that explain what is
// missing and what would supply it. Algorithm and rules: docs/capabilities.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "diag/diagnostic.hpp"
#include "registry/registry.hpp"
#include "resolver/capability_index.hpp"
#include "resolver/obligation.hpp"
#include "resolver/plan.hpp"

namespace htp {

/// What to resolve.
struct ResolveRequest {
  std::string target;                  ///< e.g. "pto-a2a3sim".
  std::vector<Obligation> obligations; ///< What the program uses, with spans.
  std::optional<std::string> backend;  ///< --backend: this backend id instead of the highest priority.
  std::optional<std::string> binding;  ///< --binding: this binding id instead of the highest priority.
  std::optional<std::vector<std::string>> passes; ///< Explicit pass list replacing the pipeline (checked).
  std::vector<Component> known_unloaded;          ///< Components from manifests of plugins not loaded.
};

/// Limits of the search.
struct ResolveOptions {
  uint32_t max_backtracks = 256; ///< Candidate attempts undone before the search gives up.
  size_t max_errors = 20;        ///< Independent failures reported before stopping.
};

/// A plan, or the diagnostics explaining why there is none (warnings may accompany a plan).
struct Resolution {
  std::optional<Plan> plan;
  DiagnosticList diagnostics;
  /// True with a plan and no error.
  bool ok() const { return plan.has_value() && !diagnostics.has_errors(); }
};

/// The fact every resolution starts with that names the target: Target.Selected(name=<target>).
Capability target_fact(const std::string &target);

class Resolver {
public:
  /// Indexes the registry (parsing every capability once); the registry must outlive the resolver.
  explicit Resolver(const Registry &registry, ResolveOptions options = {});

  /// Resolves one request; deterministic: the same registry contents in any registration order give
  /// the same plan and the same diagnostics.
  Resolution resolve(const ResolveRequest &request) const;

  /// The parsed registry.
  const CapabilityIndex &index() const { return index_; }

private:
  CapabilityIndex index_;
  ResolveOptions options_;
};

/// Indexes `registry` and resolves `request` once.
Resolution resolve(const Registry &registry, const ResolveRequest &request, ResolveOptions options = {});

} // namespace htp
