// HTP PTO CPU simulator: ChipTensor, the strided view of a global-memory buffer that orchestration code
// and kernels exchange (pto-runtime 6ebaf7715 src/common/task_interface/tensor.h names and field layout;
// independent implementation).
#pragma once

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <utility>

#include "data_type.h"
#include "pto_task_id.h"

/// What a ChipTensor operation throws for a shape or range it cannot take (the runtime reports what()).
/// A std::exception with its text inline, so that this header, which every kernel includes, needs neither
/// <string> nor <stdexcept> (whose inline functions every kernel's compile would instantiate again).
struct ChipTensorError : std::exception {
  char text[128];
  const char *what() const noexcept override { return text; }
};

/// Throws ChipTensorError with the printf-formatted message (out of line and cold).
[[noreturn]] __attribute__((noinline, cold, format(printf, 1, 2))) inline void chip_tensor_fail(const char *format,
                                                                                                ...) {
  ChipTensorError error;
  va_list args;
  va_start(args, format);
  std::vsnprintf(error.text, sizeof error.text, format, args);
  va_end(args);
  throw error;
}

/// A buffer: address and size in bytes.
struct PTOBufferHandle {
  uint64_t addr;
  uint64_t size;
};

/// How a task uses a tensor argument (drives dependency tracking).
enum class TensorArgType : int32_t {
  INPUT = 0,           ///< read
  OUTPUT = 1,          ///< written; the runtime allocates it (TensorCreateInfo)
  INOUT = 2,           ///< read then written
  OUTPUT_EXISTING = 3, ///< written; an existing tensor
  NO_DEP = 4,          ///< passed without dependency tracking
};

/// A view: element `idx` is at `buffer.addr + (start_offset + sum idx[i]*strides[i]) * element size`.
struct alignas(64) ChipTensor {
  PTOBufferHandle buffer;
  PTO2TaskId owner_task_id;
  uint64_t start_offset; ///< in elements
  int32_t version;
  uint32_t ndims;
  DataType dtype;
  bool manual_dep;
  bool is_contiguous;
  AddressSpace address_space;
  uint32_t shapes[MAX_TENSOR_DIMS];
  uint64_t extent_elem_cache;
  uint32_t strides[MAX_TENSOR_DIMS]; ///< in elements, > 0
  uint8_t _pad_cl2[36];

  ChipTensor() = default;

  /// Number of elements of the view.
  uint64_t numel() const {
    uint64_t n = 1;
    for (uint32_t i = 0; i < ndims; ++i)
      n *= shapes[i];
    return n;
  }
  /// Smallest M such that every element lies in [start_offset, start_offset + M).
  uint64_t extent_elem() const { return is_contiguous ? numel() : extent_elem_cache; }
  uint64_t nbytes() const { return numel() * get_element_size(dtype); }
  bool is_device_memory() const { return address_space == AddressSpace::DEVICE; }
  /// The buffer base (not offset by start_offset).
  template <typename T> T *data_as() const {
    return reinterpret_cast<T *>(static_cast<uintptr_t>(buffer.addr));
  }

  /// Element offset of `indices` from buffer.addr.
  uint64_t compute_flat_offset(const uint32_t indices[], uint32_t in_ndims) const {
    uint64_t off = start_offset;
    for (uint32_t d = 0; d < in_ndims; ++d)
      off += static_cast<uint64_t>(indices[d]) * strides[d];
    return off;
  }

  /// Contiguous tensor over `in_shapes` at `addr`.
  void init_external(void *addr, uint64_t buffer_size_bytes, const uint32_t in_shapes[], uint32_t in_ndims,
                     DataType in_dtype, int32_t in_version, bool in_manual_dep = false,
                     AddressSpace in_space = AddressSpace::HOST) {
    if (in_ndims == 0 || in_ndims > MAX_TENSOR_DIMS)
      chip_tensor_fail("ChipTensor: ndims must be 1..5");
    std::memset(static_cast<void *>(this), 0, sizeof(*this));
    buffer = {reinterpret_cast<uint64_t>(addr), buffer_size_bytes};
    owner_task_id = PTO2TaskId::invalid();
    version = in_version;
    ndims = in_ndims;
    dtype = in_dtype;
    manual_dep = in_manual_dep;
    address_space = in_space;
    for (uint32_t i = 0; i < in_ndims; ++i)
      shapes[i] = in_shapes[i];
    set_row_major_strides();
  }

  /// Sub-view at `offsets` with `view_shapes` (same rank, within the current shape).
  ChipTensor view(const uint32_t view_shapes[], const uint32_t view_offsets[],
                  bool in_manual_dep = false) const {
    ChipTensor r = *this;
    bool empty = false;
    for (uint32_t i = 0; i < ndims; ++i)
      empty = empty || view_shapes[i] == 0;
    for (uint32_t i = 0; i < ndims; ++i) {
      if (!empty) {
        if (view_offsets[i] + static_cast<uint64_t>(view_shapes[i]) > shapes[i])
          chip_tensor_fail("ChipTensor::view: dimension %u out of range", i);
        r.start_offset += static_cast<uint64_t>(view_offsets[i]) * strides[i];
      }
      r.shapes[i] = view_shapes[i];
    }
    r.manual_dep = in_manual_dep;
    r.refresh_derived();
    if (empty) {
      r.is_contiguous = true;
      r.extent_elem_cache = 0;
    }
    return r;
  }

  /// Swaps dimensions x and y.
  ChipTensor transpose(uint32_t x, uint32_t y, bool in_manual_dep = false) const {
    if (x >= ndims || y >= ndims) chip_tensor_fail("ChipTensor::transpose: dimension out of range");
    ChipTensor r = *this;
    std::swap(r.shapes[x], r.shapes[y]);
    std::swap(r.strides[x], r.strides[y]);
    r.manual_dep = in_manual_dep;
    r.refresh_derived();
    return r;
  }

  /// Elements [start, end) step `step` of dimension `dim`.
  ChipTensor slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step = 1,
                   bool in_manual_dep = false) const {
    if (dim >= ndims || step == 0 || end <= start || end > shapes[dim])
      chip_tensor_fail("ChipTensor::slice: bad range");
    ChipTensor r = *this;
    r.start_offset += static_cast<uint64_t>(start) * strides[dim];
    r.shapes[dim] = (end - start + step - 1) / step;
    r.strides[dim] = strides[dim] * step;
    r.manual_dep = in_manual_dep;
    r.refresh_derived();
    return r;
  }

  /// Same elements with another shape; the view must be contiguous.
  ChipTensor reshape(const uint32_t new_shapes[], uint32_t new_ndims, bool in_manual_dep = false) const {
    if (!is_contiguous) chip_tensor_fail("ChipTensor::reshape: the view is not contiguous");
    uint64_t n = 1;
    for (uint32_t i = 0; i < new_ndims; ++i)
      n *= new_shapes[i];
    if (n != numel() || new_ndims == 0 || new_ndims > MAX_TENSOR_DIMS)
      chip_tensor_fail("ChipTensor::reshape: element count differs");
    ChipTensor r = *this;
    r.ndims = new_ndims;
    for (uint32_t i = 0; i < new_ndims; ++i)
      r.shapes[i] = new_shapes[i];
    r.manual_dep = in_manual_dep;
    r.set_row_major_strides();
    return r;
  }

  /// Recomputes is_contiguous and extent_elem_cache from shapes and strides.
  void refresh_derived() {
    uint64_t extent = 1, expected = 1;
    bool contiguous = true;
    for (int i = static_cast<int>(ndims) - 1; i >= 0; --i) {
      contiguous = contiguous && strides[i] == expected;
      if (shapes[i] > 0) extent += static_cast<uint64_t>(shapes[i] - 1) * strides[i];
      expected *= shapes[i];
    }
    extent_elem_cache = extent;
    is_contiguous = contiguous;
  }

  void set_row_major_strides() {
    uint64_t s = 1;
    for (int i = static_cast<int>(ndims) - 1; i >= 0; --i) {
      strides[i] = static_cast<uint32_t>(s);
      s *= shapes[i];
    }
    extent_elem_cache = s;
    is_contiguous = true;
  }
};

static_assert(sizeof(ChipTensor) == 128, "ChipTensor is two cache lines, as in pto-runtime");
static_assert(offsetof(ChipTensor, start_offset) == 24 && offsetof(ChipTensor, shapes) == 44 &&
                  offsetof(ChipTensor, strides) == 72,
              "ChipTensor field offsets follow pto-runtime");

/// A contiguous tensor over external memory at `addr`.
inline ChipTensor make_tensor_external(void *addr, const uint32_t shapes[], uint32_t ndims,
                                       DataType dtype = DataType::FLOAT32, bool manual_dep = false,
                                       int32_t version = 0, AddressSpace space = AddressSpace::HOST) {
  uint64_t n = 1;
  for (uint32_t i = 0; i < ndims; ++i)
    n *= shapes[i];
  ChipTensor t;
  t.init_external(addr, n * get_element_size(dtype), shapes, ndims, dtype, version, manual_dep, space);
  return t;
}
