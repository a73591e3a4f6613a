// Element types of the IR contracts (docs/ir-contracts.md §1) and their C++ / pto-runtime spellings.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ptobe {

/// One element type: its IR name, the C++ type PTO-ISA kernels use, its size and kind.
struct DType {
  std::string_view name;       ///< "f32"
  std::string_view cpp;        ///< "float"
  std::string_view runtime;    ///< pto-runtime DataType enumerator ("FLOAT32")
  uint32_t bytes = 0;
  bool is_float = false;
};

/// The element type named `name` (f16 bf16 f32 i8 i16 i32 i64 u8), or nullopt.
std::optional<DType> find_dtype(std::string_view name);

/// The element type named `name`; throws std::invalid_argument for an unknown name.
DType dtype(std::string_view name);

}  // namespace ptobe
