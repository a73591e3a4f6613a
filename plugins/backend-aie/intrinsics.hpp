// The `aie` intrinsic set: one contract per operation the AIE external-kernel emitter lowers (its shape
// rule, the scalar operator it applies, whether it needs floating point). One table drives the set's
// registration, the contract table handed to the tile dialect and the kernel emitter; portable tile
// intrinsics of the same name share the entry. docs/intrinsics.md.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace htp::aie {

/// The shape rule of an operation family (the tile dialect's contract class, docs/intrinsics.md §3).
enum class IntrinsicKind {
  Load, Store, Full, Copy, Binary, ScalarBinary, Unary, RowReduce, ColReduce, RowExpand, ColExpand,
  RowExpandBinary, ColExpandBinary, Matmul, Cast, Transpose,
};

struct AieIntrinsic {
  std::string_view op;       ///< IR / surface name: "add", "colexpand_sub"
  IntrinsicKind kind;
  std::string_view scalar;   ///< the element operation: "add" for add / adds / rowexpand_add, "sum" for rowsum
  bool float_only = false;   ///< element type must be f16, bf16 or f32
  std::string_view summary;
};

/// Every operation of the set, in documentation order.
const std::vector<AieIntrinsic> &intrinsics();
/// The contract of `op`, or nullptr.
const AieIntrinsic *find_intrinsic(std::string_view op);
/// The names of every operation (the intrinsic set's `ops`).
std::vector<std::string> intrinsic_op_names();
/// The tile dialect's contract class of a kind ("elementwise", "col_expand", ...).
std::string_view contract_class(IntrinsicKind k);
/// The set's contract table as the tile dialect reads it (htp.tile.intrinsic-set.v1, module attribute
/// tile.intrinsics.aie): per op its contract class, float_only, core type (every op runs on the compute
/// tile's core, data in its local memory) and summary.
nlohmann::json intrinsic_set_table();

}  // namespace htp::aie
