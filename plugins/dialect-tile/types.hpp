// Tile types (docs/ir-contracts.md §1): tensors, tiles, scalars and compile-time constants, their JSON and
// the text diagnostics print (`Tile[32, 128, f32]`).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tile {

struct Type {
  enum class Kind { None, Tensor, Tile, Scalar, Constexpr };
  Kind kind = Kind::None;
  std::vector<int64_t> shape; ///< Tensor, Tile
  std::string dtype;          ///< Tensor, Tile, Scalar
  nlohmann::json value;       ///< Constexpr (null when only known at the call site)

  static Type tensor(std::vector<int64_t> shape, std::string dtype) {
    return {Kind::Tensor, std::move(shape), std::move(dtype), nullptr};
  }
  static Type tile(std::vector<int64_t> shape, std::string dtype) {
    return {Kind::Tile, std::move(shape), std::move(dtype), nullptr};
  }
  static Type scalar(std::string dtype) { return {Kind::Scalar, {}, std::move(dtype), nullptr}; }
  static Type constexpr_(nlohmann::json value) { return {Kind::Constexpr, {}, "", std::move(value)}; }

  bool is(Kind k) const { return kind == k; }
  friend bool operator==(const Type &a, const Type &b) {
    return a.kind == b.kind && a.shape == b.shape && a.dtype == b.dtype && a.value == b.value;
  }

  /// The contract JSON ({"kind": "tile", "shape": [...], "dtype": ...}).
  nlohmann::ordered_json to_json() const;
  /// Surface spelling for messages: `Tile[32, 128, f32]`, `Tensor[128, f32]`, `Scalar[i32]`, `Constexpr(4)`.
  std::string str() const;
};

/// "[32, 128]".
std::string shape_str(const std::vector<int64_t> &shape);

} // namespace tile
