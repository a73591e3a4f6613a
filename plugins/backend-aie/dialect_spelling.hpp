// The parts of the MLIR-AIE dialect's spelling that changed between releases, in one switchable place.
// The printer asks this table and nothing else about versions. Pass option `aie.release` picks one.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace htp::aie {

struct DialectSpelling {
  std::string id;                   ///< option value, e.g. "2025.11"
  std::string release;              ///< what it pins, for the file header and the docs
  std::string runtime_sequence;     ///< "aie.runtime_sequence", "aiex.runtime_sequence" or "func.func @sequence"
  bool link_with_on_func = true;    ///< link_with on the func.func declaration (else on aie.core)
  bool dma_coordinate_prefix = false;  ///< dma_memcpy_nd(0, 0, %arg...) of the oldest spelling
  bool acquire_returns_memref = false; ///< acquire yields the memref (no subview.access)
  std::map<std::string, std::string> device_names;  ///< HTP device -> spelled device where they differ
  /// The keyword before an object FIFO producer's dims ("toStream" before 2024).
  std::string dims_to_stream = "dimensionsToStream";
  std::string device(const std::string &name) const {
    auto it = device_names.find(name);
    return it == device_names.end() ? name : it->second;
  }
};

/// The pinned default (`2025.11`: MLIR-AIE main after PR #2708 moved the runtime sequence into `aie`).
const DialectSpelling &default_spelling();
/// The spelling with id `id`, or null.
const DialectSpelling *spelling_named(std::string_view id);
/// Every id, default first.
std::vector<std::string> spelling_ids();

}  // namespace htp::aie
