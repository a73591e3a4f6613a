// The design rules of an AIE device, checked over an emitted design (each mirrors an MLIR-AIE verifier
// or a hardware limit). Every violation names the op it concerns.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "design.hpp"
#include "device.hpp"

namespace htp::aie {

struct Violation {
  std::string code;     ///< aie.validate.<rule>
  std::string op;       ///< the op, as aie.mlir spells it: "aie.objectfifo @in_A"
  std::string message;  ///< one sentence
  Json span;            ///< the source span of what caused the op, or null
  std::string text() const { return op + ": " + message; }
};

/// The rule codes, one per rule (documented in docs/backends/aie.md).
const std::vector<std::string> &validator_rules();

/// Every violation of the device rules in `design`.
std::vector<Violation> validate(const Design &design, const DeviceProfile &device);

/// Whether a FIFO is a shared-memory FIFO (compute tiles, one consumer, vertical neighbours): no DMA.
bool shares_memory(const ObjectFifo &f, const DeviceProfile &device);

/// The bytes of data memory each tile of `design` uses: the buffers of the FIFOs it holds (a shared-memory
/// FIFO's in its producer only) and its core's stack; with `users`, what each byte count is made of
/// ("@in_X 2 x 16384", "the core stack 1024"). The rule aie.validate.memory checks these.
std::map<TileCoord, int64_t> tile_memory(const Design &design, const DeviceProfile &device,
                                         std::map<TileCoord, std::vector<std::string>> *users = nullptr);

}  // namespace htp::aie
