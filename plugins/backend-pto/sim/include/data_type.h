// HTP PTO CPU simulator: element types of pto-runtime tensors and the 64-bit scalar packing
// (pto-runtime 6ebaf7715 src/common/task_interface/data_type.h names; independent implementation).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

/// Maximum rank of a ChipTensor view.
constexpr int MAX_TENSOR_DIMS = 5;

/// Where a tensor's buffer lives; the simulator only has host memory.
enum class AddressSpace : uint8_t { HOST = 0, DEVICE = 1 };

/// Element type of a tensor, in pto-runtime's numbering.
enum class DataType : uint8_t {
  FLOAT32,
  FLOAT16,
  INT32,
  INT16,
  INT8,
  UINT8,
  BFLOAT16,
  INT64,
  UINT64,
  UINT16,
  UINT32,
  BOOL,
  DATA_TYPE_NUM,
};

/// Bytes per element; 0 for an unknown value.
inline uint64_t get_element_size(DataType dtype) {
  switch (dtype) {
  case DataType::FLOAT32:
  case DataType::INT32:
  case DataType::UINT32: return 4;
  case DataType::FLOAT16:
  case DataType::BFLOAT16:
  case DataType::INT16:
  case DataType::UINT16: return 2;
  case DataType::INT8:
  case DataType::UINT8:
  case DataType::BOOL: return 1;
  case DataType::INT64:
  case DataType::UINT64: return 8;
  default: return 0;
  }
}

/// Upper-case name of a dtype ("FLOAT32"), "UNKNOWN" otherwise.
inline const char *get_dtype_name(DataType dtype) {
  static const char *const names[] = {"FLOAT32",  "FLOAT16", "INT32",  "INT16",  "INT8",   "UINT8",
                                      "BFLOAT16", "INT64",   "UINT64", "UINT16", "UINT32", "BOOL"};
  const auto i = static_cast<unsigned>(dtype);
  return i < sizeof(names) / sizeof(names[0]) ? names[i] : "UNKNOWN";
}

/// Packs a scalar into a 64-bit slot (bit copy, zero-extended).
template <typename T> inline uint64_t to_u64(T value) {
  static_assert(sizeof(T) <= sizeof(uint64_t) && std::is_trivially_copyable_v<T>,
                "to_u64: scalar of at most 8 bytes");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}

/// Unpacks a scalar packed by to_u64.
template <typename T> inline T from_u64(uint64_t bits) {
  static_assert(sizeof(T) <= sizeof(uint64_t) && std::is_trivially_copyable_v<T>,
                "from_u64: scalar of at most 8 bytes");
  T value;
  std::memcpy(&value, &bits, sizeof(T));
  return value;
}
