// The tile dialect's surface: its Python names, dtypes and the table of portable intrinsics with the
// contract class each one is checked by. One table drives registration, scanning and checking.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tile {

/// How an intrinsic is typed (docs/dialects/tile.md has the contract of each class).
enum class OpClass {
  Elementwise,     ///< add sub mul div max min: (tile, tile) -> tile, or (tile, scalar) -> its scalar form
  ScalarForm,      ///< adds subs muls divs maxs mins: (tile, scalar) -> tile
  Unary,           ///< exp log ... : tile -> tile
  RowReduce,       ///< rowsum rowmax rowmin: [R, C] -> [R, 1]
  ColReduce,       ///< colsum colmax: [R, C] -> [1, C]
  RowExpand,       ///< rowexpand: [R, 1] -> [R, C]
  RowExpandBinary, ///< rowexpand_<op>: ([R, C], [R, 1]) -> [R, C]
  Matmul,          ///< [M, K] x [K, N] -> [M, N] (+ acc)
  Cast,            ///< tile -> tile of another dtype
  Load,            ///< tensor view -> tile
  Store,           ///< (tensor view, tile) -> nothing
  Full,            ///< shape, value -> tile
  // Contract classes only vendor intrinsics use (docs/intrinsics.md): no portable op has them.
  ColExpand,       ///< colexpand: [1, C] -> [R, C]
  ColExpandBinary, ///< colexpand_<op>: ([R, C], [1, C]) -> [R, C]
  Copy,            ///< tile -> a copy of the same type
  Alloc,           ///< shape, dtype -> an uninitialised tile
  Transpose,       ///< [R, C] -> [C, R]
};

/// The contract class's name in published intrinsic-set tables ("elementwise", "row_reduce", ...).
std::string_view class_name(OpClass c);
/// The class a published table names, or nullopt.
std::optional<OpClass> class_named(std::string_view name);
/// Every class name, in declaration order (for messages).
std::vector<std::string> class_names();

struct Intrinsic {
  std::string_view name;
  OpClass cls;
  bool float_only = false;           ///< operands must have a floating-point dtype
  std::string_view scalar_form = {}; ///< Elementwise: the op used when one operand is a scalar
};

/// Every portable intrinsic, in documentation order.
const std::vector<Intrinsic> &intrinsics();
/// The portable intrinsic named `name`, or null.
const Intrinsic *find_intrinsic(std::string_view name);
/// The candidate closest to `name` (edit distance at most 2, and less than the name's length), for
/// "did you mean".
std::optional<std::string> closest_name(std::string_view name, const std::vector<std::string> &candidates);
/// The intrinsic whose name is closest to `name`.
std::optional<std::string> closest_intrinsic(std::string_view name);
/// The names of every intrinsic (the intrinsic set's ops).
std::vector<std::string> intrinsic_names();

/// The dialect's own surface names (decorator, types, directions, dtypes).
std::vector<std::string> dialect_names();
/// The dtypes, in documentation order.
const std::vector<std::string> &dtypes();
bool is_dtype(std::string_view name);
bool is_float_dtype(std::string_view dtype);

/// The last component of a dotted name ("tile.f32" -> "f32").
std::string_view last_component(std::string_view dotted);

} // namespace tile
