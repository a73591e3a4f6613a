// The canonical Axe layout: shard iters, replica iters and offsets over named axes, with the memory and
// hardware facets and the pending collective effects of a value. Every other layout spelling (the short
// distribution text "S(0)R", Layout.axe(...), layouts of other kinds) is converted to this one form.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "layout_result.hpp"

namespace htp::axe {

/// One Axe iterator: `extent` steps of `stride` along the named `axis`. Shard iters carry the tensor
/// dimension they split (`dim`); replica iters have dim -1.
struct AxeIter {
  int64_t extent = 1;
  int64_t stride = 1;
  std::string axis;
  int dim = -1;
  friend bool operator==(const AxeIter &, const AxeIter &) = default;
};

/// A reduction the value still owes: each core along `iter.axis` holds a partial `op` result.
struct PendingEffect {
  std::string op;     ///< "sum", "max" or "min"
  AxeIter iter;       ///< the device iter whose shards were reduced (dim -1)
  std::string source; ///< the intrinsic that left it ("rowsum", "matmul")
  friend bool operator==(const PendingEffect &a, const PendingEffect &b) {
    return a.op == b.op && a.iter == b.iter;
  }
};

/// Memory facet: how the local part is laid out in the core's memory (absent keys: row-major, plain).
struct MemFacet {
  std::optional<std::vector<int64_t>> strides; ///< element stride per dim
  std::optional<std::vector<int64_t>> order;   ///< dims from outermost to innermost
  nlohmann::json swizzle;                      ///< null or the user's value (e.g. "xor(3)", 3)
  nlohmann::json pack;                         ///< null or the user's value (elements per packed word)
  std::vector<AxeIter> banks;                  ///< iters on memory-bank axes (`ub.bank`), with dim
  /// A tiled local layout: every local `m` iter (with dim, each dim's major first) when some dim has
  /// several; `strides` is then absent (htp::LayoutMem::iters).
  std::vector<AxeIter> iters;
  bool empty() const {
    return !strides && !order && swizzle.is_null() && pack.is_null() && banks.empty() && iters.empty();
  }
  friend bool operator==(const MemFacet &, const MemFacet &) = default;
};

/// Hardware facet: the memory space the value lives in ("GM", "UB", "L1", ...); absent means GM.
struct HwFacet {
  std::optional<std::string> space;
  friend bool operator==(const HwFacet &, const HwFacet &) = default;
};

/// The most points a kernel's mesh, or one device axis's iters, may have: meshes are cores, and no target
/// has more; a bound checked before anything proportional to a mesh is built.
inline constexpr int64_t kMaxMeshPoints = 65536;
inline constexpr int64_t kMaxAxisPoints = kMaxMeshPoints;

/// The device mesh of a kernel: `@kernel(mapping=[P0, P1, ...])` gives axes mesh.x, mesh.y, ...
class Mesh {
public:
  Mesh() = default;
  /// The mesh of a mapping (empty mapping: a single core, no axes).
  static Mesh from_mapping(const std::vector<int64_t> &mapping);

  size_t rank() const { return extents_.size(); }
  const std::vector<int64_t> &extents() const { return extents_; }
  /// Name of mesh axis `i`: mesh.x, mesh.y, mesh.z, mesh.w, then mesh.<i>.
  static std::string axis_name(size_t i);
  /// Index of a mesh axis name, or nullopt.
  std::optional<size_t> index_of(std::string_view axis) const;
  /// Extent of a device axis (a mesh axis, or `core`: all cores), or nullopt when unknown.
  std::optional<int64_t> extent_of(std::string_view axis) const;
  /// "mapping=[2, 2]" for messages.
  std::string describe() const;

private:
  std::vector<int64_t> extents_;
};

/// Whether `axis` is a device axis (distributes over cores: mesh.*, core).
bool is_device_axis(std::string_view axis);
/// Whether `axis` is a local memory axis (`m`, the element offset, or `<space>.bank`).
bool is_local_axis(std::string_view axis);

/// The canonical layout of a tensor or tile value.
struct AxeLayout {
  int rank = 0;                          ///< number of tensor dims
  std::vector<int64_t> shape;            ///< logical (global) shape, empty when unknown
  std::string dtype;                     ///< element type when known ("f32"), else empty
  std::vector<AxeIter> shard;            ///< device iters with dim, grouped by dim, major to minor
  std::vector<AxeIter> replica;          ///< device iters the value is replicated over
  std::map<std::string, int64_t> offset; ///< constant coordinate per axis
  MemFacet mem;
  HwFacet hw;
  std::vector<PendingEffect> pending; ///< reductions still to discharge
  std::string text;                   ///< the source spelling, when written as text
  std::string source_kind = "axe";    ///< the layout kind it was written in
  std::vector<int64_t> tile;          ///< per-core tile shape of a body value, when known
  bool zero = false;                  ///< value is the constant 0 (neutral for pending sums)

  /// Shard iters of dim `d`, major to minor.
  std::vector<AxeIter> dim_iters(int d) const;
  /// Whether the value is replicated over `axis`.
  bool replicated_over(std::string_view axis) const;
  /// Same distribution (shard, replica, offset), ignoring facets, shape and effects.
  bool same_distribution(const AxeLayout &o) const {
    return rank == o.rank && shard == o.shard && replica == o.replica && offset == o.offset;
  }
};

/// The distribution view, one entry per dim: nullopt = R, i = S(i). Nullopt overall when the layout
/// is not expressible in the short form (cyclic or partial shards, offsets, `core` iters).
std::optional<std::vector<std::optional<size_t>>> dist_view(const AxeLayout &l, const Mesh &mesh);
/// "S(0)R" for a view.
std::string dist_text(const std::vector<std::optional<size_t>> &view);
/// The short text when expressible, else the Axe form "axe(shard=[(2,1,mesh.x)@0], replica=[...])".
std::string describe(const AxeLayout &l, const Mesh &mesh);

/// Per-core shape: each dim divided by the extents of its shard iters (needs a known shape).
Result<std::vector<int64_t>> local_shape(const AxeLayout &l);
/// Bytes of one element of `dtype`, or nullopt for an unknown dtype.
std::optional<int64_t> dtype_size(std::string_view dtype);

/// The htp.layout.v1 layout object (docs/dialects/layout-axe.md).
nlohmann::ordered_json to_json(const AxeLayout &l, const Mesh &mesh);
/// Reads a layout object; `shard`, `replica`, `offset`, `mem`, `hw` and `pending` are optional.
Result<AxeLayout> layout_from_json(const nlohmann::json &j);

} // namespace htp::axe
