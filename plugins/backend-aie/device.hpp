// The NPU hardware profile as data: device sizes, tile kinds by row, memories, DMA channels, buffer
// descriptors and DMA addressing limits for npu1 / npu2 and their partial-column devices.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <htp/device_estimate.hpp>

namespace htp::aie {

enum class TileKind { Shim, Mem, Compute, Invalid };

/// "shim", "mem tile", "compute tile".
std::string_view tile_kind_name(TileKind k);

/// What one kind of tile has: data memory and DMA channels (S2MM = into the tile, MM2S = out of it).
struct TileResources {
  int64_t memory_bytes = 0;
  int dma_in = 0;
  int dma_out = 0;
};

/// The address generator of one tile kind's DMA buffer descriptors (MLIR-AIE's verifyStridesWraps for
/// AIE-ML): how many dimensions a pattern may have, the largest size of each (dim 0 counted in 32-bit
/// words) and the largest stride (in 32-bit words).
struct DmaAddressing {
  int dims = 4;                     ///< shim: dma_memcpy_nd's 4; mem tile: 4; compute tile: 3
  int64_t max_wrap = 1023;          ///< sizes of the dims below the outermost (dim 0 in words)
  int64_t max_stride_words = 1 << 20;
};

/// DMA limits of a device (data; docs/backends/aie.md §1).
struct DmaLimits {
  DmaAddressing shim{4, 1023, int64_t{1} << 20};     ///< 10-bit wraps, 20-bit steps
  DmaAddressing mem{4, 1023, int64_t{1} << 17};      ///< 10-bit wraps, 17-bit steps
  DmaAddressing compute{3, 255, int64_t{1} << 13};   ///< 8-bit wraps, 13-bit steps
  int64_t max_repeat = 64;          ///< size of the outermost (iteration) dim of a shim transfer
  int64_t granule_bytes = 4;        ///< addresses, dim-0 sizes and non-unit strides are whole granules
  int shim_bds = 16;                ///< buffer descriptor ids 0..shim_bds-1 per shim tile
  const DmaAddressing &of(TileKind k) const { return k == TileKind::Shim ? shim : k == TileKind::Mem ? mem : compute; }
};

/// Peak rates of one compute tile for the estimated device time (docs/packages.md), each with its source.
struct CorePerformance {
  htp::ProfileNumber clock;                                        ///< GHz
  std::map<std::string, htp::ProfileNumber> matmul_macs_per_cycle;  ///< by input dtype
  htp::ProfileNumber vector_bytes_per_cycle;
  htp::ProfileNumber transcendental_bytes_per_cycle;
  htp::ProfileNumber dma_channel_bytes_per_cycle;                  ///< one DMA channel (S2MM or MM2S)
  htp::ProfileNumber call_overhead;                                ///< ns per kernel call

  /// Rates of one compute tile: loads through its `dma_in` channels, stores through its `dma_out` ones.
  htp::RooflineRates rates(int dma_in, int dma_out) const;
  nlohmann::json to_json() const;
};

struct DeviceProfile {
  std::string name;          ///< MLIR-AIE device name: npu1, npu1_2col, npu2, ...
  std::string arch;          ///< aie2 (npu1) or aie2p (npu2): the Peano target
  int columns = 0;
  int rows = 6;              ///< row 0 shim, row 1 mem tile, rows 2..5 compute
  TileResources shim{0, 2, 2};
  TileResources mem{512 * 1024, 6, 6};
  TileResources compute{64 * 1024, 2, 2};
  DmaLimits dma;
  CorePerformance performance;

  TileKind kind_of(int row) const;
  bool contains(int col, int row) const { return col >= 0 && col < columns && row >= 0 && row < rows; }
  int compute_rows() const { return rows - 2; }
  int compute_tiles() const { return columns * compute_rows(); }
  const TileResources &resources(TileKind k) const;
  /// "npu1 (4 columns x 4 compute rows = 16 compute tiles)".
  std::string describe() const;
};

/// Every device of the profile table.
const std::vector<DeviceProfile> &device_profiles();
/// The device of an HTP target: "aie-npu1" -> npu1, "aie-npu1_2col" -> npu1_2col.
const DeviceProfile *device_for_target(std::string_view target);
/// The device named `name`, or null.
const DeviceProfile *device_named(std::string_view name);
/// The targets the backend registers: "aie-" + every device name.
std::vector<std::string> aie_targets();

}  // namespace htp::aie
