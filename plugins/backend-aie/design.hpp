// The AIE design of one entrypoint: tiles, object FIFOs and their links, cores with their programs,
// external kernels, and the runtime sequence. It is what the mapper builds, the validator checks, the
// MLIR printer spells as aie.mlir, and the aie-sim binding executes (read back from mapping.json and
// fifos.json, which hold exactly this model: htp.aie.mapping.v1 / htp.aie.fifos.v1).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace htp::aie {

using Json = nlohmann::json;

struct TileCoord {
  int col = 0;
  int row = 0;
  friend bool operator==(const TileCoord &, const TileCoord &) = default;
  friend auto operator<=>(const TileCoord &, const TileCoord &) = default;
  /// "tile_0_2": the SSA name in aie.mlir.
  std::string ssa() const { return "tile_" + std::to_string(col) + "_" + std::to_string(row); }
  /// "(0, 2)".
  std::string text() const { return "(" + std::to_string(col) + ", " + std::to_string(row) + ")"; }
};

/// One `<size = s, stride = t>` entry of dimensionsToStream.
struct StreamDim {
  int64_t size = 1;
  int64_t stride = 1;
};

/// aie.objectfifo @name(producer, {consumers}, depth) : memref<shape x dtype>.
struct ObjectFifo {
  std::string name;
  TileCoord producer;
  std::vector<TileCoord> consumers;
  std::vector<int64_t> depth;          ///< one value, or 1 + consumers values (producer first)
  std::vector<int64_t> shape;          ///< element shape of one object
  std::string dtype;                   ///< HTP dtype (f32, i32, ...)
  std::vector<StreamDim> producer_dims;  ///< dimensionsToStream on the producer end (may be empty)
  Json span;                           ///< source span that caused it, or null

  int64_t elements() const;
  /// Depth at the producer (index 0) or at consumer `i` (index i + 1).
  int64_t depth_at(size_t end) const { return depth.size() == 1 ? depth[0] : end < depth.size() ? depth[end] : 0; }
};

/// aie.objectfifo.link [@srcs] -> [@dsts]([src offsets] [dst offsets]): a distribute (one source,
/// several destinations at element offsets into the source object) or a join (the reverse).
struct FifoLink {
  std::vector<std::string> srcs;
  std::vector<std::string> dsts;
  std::vector<int64_t> src_offsets;
  std::vector<int64_t> dst_offsets;
};

/// An argument of an external kernel call in a core.
struct CallArg {
  enum class Kind { Fifo, Const, Iteration, Buffer } kind = Kind::Fifo;
  std::string fifo;       ///< Fifo: the acquired object of this FIFO; Buffer: the tile buffer
  Json value;             ///< Const: the number
  std::string dtype;      ///< Const / Iteration: the scalar type
  int64_t start = 0;      ///< Iteration: value = start + step * iteration index
  int64_t step = 1;
};

/// One statement of a core program.
struct CoreOp {
  enum class Kind { Acquire, Release, Call, Loop } kind = Kind::Call;
  std::string fifo;        ///< Acquire/Release
  std::string port;        ///< "Produce" or "Consume"
  int64_t count = 1;       ///< Acquire/Release: number of objects
  std::string callee;      ///< Call
  std::vector<CallArg> args;
  int64_t trip = 1;        ///< Loop: iterations
  std::vector<CoreOp> body;  ///< Loop body
};

/// A buffer in a compute tile's own memory (aie.buffer) that no FIFO moves: where a core writes the copy of
/// a replicated output that another core sends (the values are the same on every replica).
struct TileBuffer {
  std::string name;
  TileCoord tile;
  std::vector<int64_t> shape;
  std::string dtype;
  Json span;
  int64_t elements() const;
};

struct Core {
  std::string name;        ///< what it runs, e.g. "add_tile[1]" or process "loader"
  TileCoord tile;
  int64_t stack_size = 1024;
  std::vector<CoreOp> body;
  Json span;
};

/// One parameter of an external kernel function (func.func private @k(...)).
struct KernelArg {
  bool memref = true;
  std::vector<int64_t> shape;  ///< memref shape
  std::string dtype;
};

struct KernelFunc {
  std::string name;            ///< symbol, also the C function name
  std::string source;          ///< kernels/<name>.cc (relative to the design directory)
  std::string object;          ///< <name>.o (link_with)
  std::vector<KernelArg> args;
  int64_t locals_bytes = 0;    ///< bytes of its tile registers (on the core's stack)
  Json work;                   ///< htp::KernelWork of one call (the estimated device time's input), or null
};

/// A parameter of the runtime sequence (a host tensor).
struct RuntimeParam {
  std::string name;
  std::vector<int64_t> shape;
  std::string dtype;
  std::string dir;             ///< in, out, inout
  /// A runtime scalar of the entry: the host passes it as a one-element buffer (shape [1]) that a FIFO
  /// brings to the cores.
  bool scalar = false;
  /// An Out of the entry that the design moves in as well (dir "inout"), since the kernel does not store all
  /// of it (plan_kernel.cpp): htp.entrypoints lists it as an Out, so a caller may omit it.
  bool entry_out = false;
};

/// aiex.npu.dma_memcpy_nd or aiex.npu.dma_wait in the runtime sequence.
struct DmaOp {
  enum class Kind { Memcpy, Wait } kind = Kind::Memcpy;
  std::string param;           ///< Memcpy: the runtime parameter
  std::string fifo;            ///< metadata (Memcpy) / symbol (Wait)
  int64_t id = 0;              ///< shim buffer descriptor id
  std::array<int64_t, 4> offsets{0, 0, 0, 0};  ///< outermost first
  std::array<int64_t, 4> sizes{1, 1, 1, 1};
  std::array<int64_t, 4> strides{0, 0, 0, 1};
  bool issue_token = false;
  /// Element offset of the first element: sum of offsets[i] * strides[i].
  int64_t base() const;
  int64_t elements() const { return sizes[0] * sizes[1] * sizes[2] * sizes[3]; }
};

struct Design {
  std::string entry;
  std::string kind;            ///< kernel | workload | csp-program
  std::string device;          ///< MLIR-AIE device name
  std::vector<ObjectFifo> fifos;
  std::vector<FifoLink> links;
  std::vector<TileBuffer> buffers;
  std::vector<Core> cores;
  std::vector<KernelFunc> kernels;
  std::vector<RuntimeParam> params;
  std::vector<DmaOp> sequence;
  Json span;
  std::map<std::string, std::string> sources;  ///< kernel name -> .cc text (files, not in the JSON documents)

  const ObjectFifo *fifo(const std::string &name) const;
  const TileBuffer *buffer(const std::string &name) const;
  const RuntimeParam *param(const std::string &name) const;
  /// Every tile the design uses, sorted by (col, row).
  std::vector<TileCoord> tiles() const;
};

/// Bytes of one element of an HTP dtype (0 when unknown).
int64_t dtype_bytes(const std::string &dtype);

/// The bytes of a one-element object of `dtype` holding a runtime scalar (a design's scalar buffer): a
/// float dtype takes `real`, an integer one `integer`, narrowed to its width.
std::vector<char> scalar_object(const std::string &dtype, double real, int64_t integer);
/// The shape of the object a runtime scalar of `dtype` travels in: one element, or as many as fill a 32-bit word
/// for a narrower dtype (a DMA moves whole words; the kernel reads the first element).
inline std::vector<int64_t> scalar_shape(const std::string &dtype) {
  const int64_t bytes = dtype_bytes(dtype);
  return {bytes > 0 && bytes < 4 ? 4 / bytes : 1};
}
/// Whether scalars of `dtype` are floating (f16, bf16, f32, f64): their values are reals, not integers.
inline bool floating_dtype(const std::string &dtype) {
  return dtype == "f32" || dtype == "f64" || dtype == "f16" || dtype == "bf16";
}

/// Product of a shape (the elements of a tensor or object of that shape).
int64_t product(const std::vector<int64_t> &shape);

/// mapping.json: entry, device, params, kernels, cores, runtime sequence (htp.aie.mapping.v1).
Json mapping_to_json(const Design &d);
/// fifos.json: object FIFOs and links (htp.aie.fifos.v1).
Json fifos_to_json(const Design &d);
/// The design back from both documents; throws std::runtime_error naming the bad key.
Design design_from_json(const Json &mapping, const Json &fifos);
/// Both documents in one object {"mapping": ..., "fifos": ...} (the module attribute aie.designs).
Json design_to_json(const Design &d);
Design design_from_combined_json(const Json &j);

}  // namespace htp::aie
