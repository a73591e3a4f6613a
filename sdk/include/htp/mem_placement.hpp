// Where a layout's `mem` facet puts the elements of a local part (docs/dialects/layout-axe.md §2): element
// strides over the local shape (`strides=`, or the dense strides of `order=`), or over a tiled layout's
// iters (`mem.iters`), and the offset each row-major element gets. Backends lower it (backend-aie into DMA
// patterns and object orders, backend-pto into strided views); the pto-a2a3sim binding stages arrays by it.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <htp/layout_signatures.hpp>

namespace htp {

/// The row-major index of a local element split into digits over `extents` (major first); digit k moves
/// `strides[k]` elements.
struct MemPlacement {
  std::vector<int64_t> extents, strides;
};

/// Dense strides of `shape` with its dims in `order` (outermost first): the last one is contiguous.
inline std::vector<int64_t> strides_of_order(const std::vector<int64_t> &order, const std::vector<int64_t> &shape) {
  std::vector<int64_t> st(shape.size(), 1);
  int64_t step = 1;
  for (size_t i = order.size(); i-- > 0;) {
    st[static_cast<size_t>(order[i])] = step;
    step *= shape[static_cast<size_t>(order[i])];
  }
  return st;
}

/// The placement `mem` gives a local part of shape `local`; nullopt when it sets neither iters, strides nor
/// order (row-major). Swizzle, pack and banks are the caller's to refuse.
inline std::optional<MemPlacement> mem_placement(const LayoutMem &mem, const std::vector<int64_t> &local) {
  MemPlacement p;
  if (!mem.iters.empty()) {
    for (const LayoutIter &it : mem.iters) {
      p.extents.push_back(it.extent);
      p.strides.push_back(it.stride);
    }
  } else if (mem.strides) {
    p = {local, *mem.strides};
  } else if (mem.order) {
    p = {local, strides_of_order(*mem.order, local)};
  } else {
    return std::nullopt;
  }
  return p;
}

/// The offset of each row-major element under `p` (`extents` and `strides` of one length), or nullopt when
/// the offsets are not exactly 0 .. n - 1, n the product of the extents (holes or overlaps).
inline std::optional<std::vector<int64_t>> placement_offsets(const MemPlacement &p) {
  int64_t n = 1;
  for (int64_t e : p.extents) n *= e;
  std::vector<int64_t> out;
  out.reserve(static_cast<size_t>(n));
  std::vector<bool> seen(static_cast<size_t>(n), false);
  std::vector<int64_t> digit(p.extents.size(), 0);
  for (int64_t e = 0; e < n; ++e) {
    int64_t off = 0;
    for (size_t i = 0; i < p.extents.size(); ++i) off += digit[i] * p.strides[i];
    if (off < 0 || off >= n || seen[static_cast<size_t>(off)]) return std::nullopt;
    seen[static_cast<size_t>(off)] = true;
    out.push_back(off);
    for (size_t i = p.extents.size(); i-- > 0;)
      if (++digit[i] < p.extents[i]) break;
      else digit[i] = 0;
  }
  return out;
}

}  // namespace htp
