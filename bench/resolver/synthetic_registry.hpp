// A synthetic registry for resolver benchmarks: N components with about 5 capabilities each, shaped like
// real plugin sets (targets with backends, bindings and pipelines; dialect families of staged passes
// chained by requires/provides; library passes pulled in by version-ranged requirements).
#pragma once

#include <cstddef>

#include "registry/registry.hpp"
#include "resolver/resolver.hpp"

namespace htp::bench {

/// What a synthetic registry holds.
struct SyntheticStats {
  size_t components = 0;
  size_t capabilities = 0; ///< provides + requires + conflicts + accepts + applies_to + invalidates entries.
};

/// Fills `registry` with about `components` components; deterministic for a given count.
SyntheticStats build_synthetic_registry(Registry &registry, size_t components);

/// The request that resolves the synthetic registry: target t0, a quarter of the dialects in use.
ResolveRequest synthetic_request(size_t components);

} // namespace htp::bench
