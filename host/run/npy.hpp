// NumPy .npy files (format versions 1.0-3.0, little-endian, C order) and host arrays for running packages.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <dlpack/dlpack.h>

#include "diag/diagnostic.hpp"

namespace htp {

/// A C-contiguous array in host memory with an HTP dtype name (f16 bf16 f32 f64 i8 i16 i32 i64 u8 u16
/// u32 u64 bool).
struct HostArray {
  std::string dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;
  /// Caller memory used in place of `data` (zero-copy): C-contiguous, elements() * dtype_size(dtype) bytes,
  /// alive and not resized for as long as the array is used. Null: the array owns `data`.
  uint8_t *external = nullptr;

  uint8_t *bytes() { return external ? external : data.data(); }
  const uint8_t *bytes() const { return external ? external : data.data(); }

  /// The element count; -1 when a dimension is negative or the count overflows 64 bits.
  int64_t elements() const;
  /// "f32[2, 3]".
  std::string describe() const;
};

/// Bytes per element of an HTP dtype; 0 when the name is unknown.
size_t dtype_size(const std::string &dtype);
/// The DLPack type of an HTP dtype; false when unknown.
bool dtype_to_dlpack(const std::string &dtype, DLDataType &out);
/// The HTP dtype of a DLPack type (bool as kDLUInt 8 reads as u8); nullopt when HTP has none.
std::optional<std::string> dtype_from_dlpack(DLDataType type);
/// The NumPy descr ("<f4") of an HTP dtype; bf16 travels as "<u2" (NumPy has no bfloat16).
std::optional<std::string> dtype_to_numpy(const std::string &dtype);
/// The HTP dtype of a NumPy descr; nullopt when unsupported (big-endian, structured, objects, ...).
std::optional<std::string> dtype_from_numpy(const std::string &descr);

/// Parses .npy bytes; errors name `file` and what is wrong (version, header, dtype, order, size).
Expected<HostArray> parse_npy(const std::string &bytes, const std::string &file);
Expected<HostArray> read_npy(const std::filesystem::path &path);
/// The .npy (version 1.0) encoding of `a`.
std::string encode_npy(const HostArray &a);
/// Writes `a` through a temporary sibling renamed into place.
std::optional<Diagnostic> write_npy(const std::filesystem::path &path, const HostArray &a);

}  // namespace htp
