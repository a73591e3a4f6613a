// Building canonical Axe layouts from the surface forms, checked against the kernel's mesh and the
// tensor's shape: the short text "S(0)R", the full Layout.axe(shard=..., replica=..., offset=...) form
// and partial layout objects produced by converters of other layout kinds.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "axe_layout.hpp"
#include "layout_text.hpp"

namespace htp::axe {

/// The tensor a layout is attached to.
struct TensorInfo {
  std::vector<int64_t> shape;
  std::string dtype;
};

/// An iter as written in Layout.axe: (extent, stride, axis) over the row-major logical index.
struct UserIter {
  int64_t extent = 1;
  int64_t stride = 1;
  std::string axis;
};

/// S(i) -> one block shard iter of mesh axis i on that dim; mesh axes no dim shards become replica iters.
Result<AxeLayout> from_dist(const DistSpec &spec, const TensorInfo &t, const Mesh &mesh);
/// Layout.axe: shard iters decompose the row-major index (device axes and local axes `m`,
/// `<space>.bank`), grouped into dims by their extents; `core` iters are rewritten onto mesh axes.
Result<AxeLayout> from_axe_iters(const std::vector<UserIter> &shard, const std::vector<UserIter> &replica,
                                 const std::map<std::string, int64_t> &offset, const TensorInfo &t,
                                 const Mesh &mesh);
/// A partial layout object (e.g. from another kind's converter) completed for a tensor: rank and shape
/// filled in, replica iters derived from the unused mesh axes when absent, then validated.
Result<AxeLayout> complete(AxeLayout partial, const TensorInfo &t, const Mesh &mesh);
/// Checks a layout against the mesh: known device axes, no axis coordinate used twice, offsets in range,
/// divisible dims, memory-facet lists of the right length.
Result<AxeLayout> validate(AxeLayout l, const Mesh &mesh);

} // namespace htp::axe
