// The values an integer dtype narrower than 64 bits holds: what a checked conversion (a run scalar, a workload
// value given to a kernel's Scalar, a full() constant) compares with instead of wrapping.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

namespace htp {

/// [lo, hi] of "i8", "i16", "i32", "u8", "u16", "u32" or "bool"; nullopt for a 64-bit or floating dtype.
inline std::optional<std::pair<int64_t, int64_t>> narrow_integer_range(std::string_view dtype) {
  if (dtype == "i8") return std::pair<int64_t, int64_t>{INT8_MIN, INT8_MAX};
  if (dtype == "i16") return std::pair<int64_t, int64_t>{INT16_MIN, INT16_MAX};
  if (dtype == "i32") return std::pair<int64_t, int64_t>{INT32_MIN, INT32_MAX};
  if (dtype == "u8") return std::pair<int64_t, int64_t>{0, UINT8_MAX};
  if (dtype == "u16") return std::pair<int64_t, int64_t>{0, UINT16_MAX};
  if (dtype == "u32") return std::pair<int64_t, int64_t>{0, UINT32_MAX};
  if (dtype == "bool") return std::pair<int64_t, int64_t>{0, 1};
  return std::nullopt;
}

}  // namespace htp
