// 4-D DMA access patterns (sizes and strides per dimension, outermost first) as the shim's
// aiex.npu.dma_memcpy_nd spells them: derived from the element addresses a transfer must visit (the
// concatenated per-core views of a layout), split to respect the hardware limits, and enumerated
// again by the simulator.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "design.hpp"
#include "device.hpp"

namespace htp::aie {

struct AccessPattern {
  int64_t base = 0;                           ///< element offset of the first element
  std::array<int64_t, 4> sizes{1, 1, 1, 1};   ///< outermost first
  std::array<int64_t, 4> strides{0, 0, 0, 1};
  int64_t elements() const { return sizes[0] * sizes[1] * sizes[2] * sizes[3]; }
};

/// What one buffer descriptor's address generator allows (from the device profile, DmaLimits).
struct PatternLimits {
  int dims = 4;                     ///< dimensions available (levels beyond it do not fit)
  int64_t max_wrap = 1023;          ///< size of every dim but a repeat (dim 0 counted in granules)
  int64_t max_repeat = 0;           ///< >0: the 4th dim is a repeat count with this limit (shim transfers)
  int64_t max_stride_granules = 1 << 20;
  int64_t granule_bytes = 4;
};

/// The limits of a shim transfer (aiex.npu.dma_memcpy_nd: 4 dims, the outermost a repeat count).
PatternLimits shim_transfer_limits(const DmaLimits &dma);
/// The limits of dimensionsToStream on an object FIFO produced by a `kind` tile.
PatternLimits stream_limits(const DmaLimits &dma, TileKind kind);

/// Whether the innermost dim may step by `stride` elements of `elem_bytes`: a unit stride always; any
/// other only for elements of at least one granule (the DMA moves whole 32-bit words).
bool innermost_stride_ok(int64_t stride, int64_t elem_bytes, int64_t granule_bytes);

/// The pattern that visits exactly `addrs` in order with at most `limits.dims` dims, every dim within
/// the limits (elements of `elem_bytes`); nullopt when there is none.
std::optional<AccessPattern> fit_pattern(const std::vector<int64_t> &addrs, int64_t elem_bytes, const PatternLimits &limits);

/// The dims of a pattern as dimensionsToStream lists them (outermost first, leading unit dims dropped).
std::vector<StreamDim> stream_dims(const AccessPattern &p);
/// The element offsets dimensionsToStream entries visit, in order (any number of dims; empty: none).
std::vector<int64_t> enumerate(const std::vector<StreamDim> &dims);

/// The element addresses a pattern visits, in order.
std::vector<int64_t> enumerate(const AccessPattern &p);

/// Splits `base` over the dims (offsets per dim, outermost first) so that sum(offsets*strides) = base;
/// nullopt when the strides cannot express it.
std::optional<std::array<int64_t, 4>> offsets_for(const AccessPattern &p);

}  // namespace htp::aie
