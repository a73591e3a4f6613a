// 4-D DMA access patterns (sizes and strides per dimension, outermost first) as the shim's
// aiex.npu.dma_memcpy_nd spells them: derived from the element addresses a transfer must visit (the
// concatenated per-core views of a layout), split to respect the hardware limits, and enumerated
// again by the simulator.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "device.hpp"

namespace htp::aie {

struct AccessPattern {
  int64_t base = 0;                           ///< element offset of the first element
  std::array<int64_t, 4> sizes{1, 1, 1, 1};   ///< outermost first
  std::array<int64_t, 4> strides{0, 0, 0, 1};
  int64_t elements() const { return sizes[0] * sizes[1] * sizes[2] * sizes[3]; }
};

/// The pattern that visits exactly `addrs` in order with at most 4 dims, the innermost of stride 1 and
/// every dim within the limits of `limits` (elements of `elem_bytes`); nullopt when there is none.
std::optional<AccessPattern> fit_pattern(const std::vector<int64_t> &addrs, int64_t elem_bytes, const DmaLimits &limits);

/// The element addresses a pattern visits, in order.
std::vector<int64_t> enumerate(const AccessPattern &p);

/// Splits `base` over the dims (offsets per dim, outermost first) so that sum(offsets*strides) = base.
std::array<int64_t, 4> offsets_for(const AccessPattern &p);

}  // namespace htp::aie
