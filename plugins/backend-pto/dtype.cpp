#include "dtype.hpp"

#include <array>
#include <stdexcept>

namespace ptobe {

namespace {
constexpr std::array<DType, 8> kDTypes{{
    {"f16", "half", "FLOAT16", 2, true},
    {"bf16", "bfloat16_t", "BFLOAT16", 2, true},
    {"f32", "float", "FLOAT32", 4, true},
    {"i8", "int8_t", "INT8", 1, false},
    {"i16", "int16_t", "INT16", 2, false},
    {"i32", "int32_t", "INT32", 4, false},
    {"i64", "int64_t", "INT64", 8, false},
    {"u8", "uint8_t", "UINT8", 1, false},
}};
}  // namespace

std::optional<DType> find_dtype(std::string_view name) {
  for (const DType &d : kDTypes)
    if (d.name == name) return d;
  return std::nullopt;
}

DType dtype(std::string_view name) {
  if (auto d = find_dtype(name)) return *d;
  throw std::invalid_argument("unknown element type '" + std::string(name) + "'");
}

}  // namespace ptobe
